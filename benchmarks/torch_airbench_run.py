"""airbench94's training run in plain PyTorch on the CPU, on the same CIFAR-10 files minidl
reads: the reference to put minidl's recipe (examples/cifar10.py --model airbench94) beside,
epoch by epoch.

    python benchmarks/torch_airbench_run.py [--data-dir DIR] [--seed 0] [--bf16] [--threads 2]
        [--epochs 9.9] [--json PATH]

Written from the algorithm of KellerJordan/cifar10-airbench's legacy/airbench94.py (not its
code): the network of torch_airbench.py with the reference's initialization (2x2 patch
whitening of the first 5,000 normalized training images, +-eigenvectors / sqrt(eigenvalue +
5e-4), frozen; identity (dirac) first filters in every 3x3 convolution; zero biases); its data
order (every image mirrored or not once, the whole set mirrored every other epoch, a random
shift of up to 2 pixels per image and epoch on reflect-padded images, shuffled batches of 1024,
the last partial one dropped); torch.optim.SGD (Nesterov 0.85) with its two parameter groups
(BatchNorm biases at 64x the rate), the summed label-smoothed cross-entropy, its warm-up /
warm-down LambdaLR, the lookahead over the whole state_dict every 5 steps, the whitening bias
trained for 3 epochs only; and its evaluation (batch statistics off, 2,000 images a batch,
TTA level 2 at the end). The GPU's float16 becomes bfloat16 autocast with --bf16 (float32
otherwise). Prints one line per epoch and the final accuracies.
"""

import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_airbench import LookaheadState, airbench94, lr_factor, optimizer_for  # noqa: E402

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


def normalized(x):
    t = torch.tensor(x, dtype=torch.float32).permute(0, 3, 1, 2) / 255
    return (t - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)


def whitening_kernel(images, eps=5e-4):
    """(24, 3, 2, 2): the 2x2 patches' covariance eigenvectors over sqrt(eigenvalue + eps),
    largest first, then their negatives."""
    patches = images.unfold(2, 2, 1).unfold(3, 2, 1)            # N, C, H', W', 2, 2
    patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(-1, 12).double()
    covariance = patches.T @ patches / len(patches)
    values, vectors = torch.linalg.eigh(covariance)
    values, vectors = values.flip(0), vectors.T.flip(0).reshape(12, 3, 2, 2)
    scaled = vectors / torch.sqrt(values + eps).view(-1, 1, 1, 1)
    return torch.cat((scaled, -scaled)).float()


def make_net(train_images):
    net = airbench94()
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, nn.Conv2d) and module.kernel_size == (3, 3):
                nn.init.dirac_(module.weight[:module.in_channels])
        net[0].weight.copy_(whitening_kernel(train_images))
        net[0].bias.zero_()
    return net.to(memory_format=torch.channels_last)


class Epochs:
    """The reference loader's batches, epoch after epoch."""

    def __init__(self, images, labels, batch_size, generator):
        self.labels, self.batch_size, self.generator = labels, batch_size, generator
        coins = torch.rand(len(images), generator=generator) < 0.5
        flipped = torch.where(coins.view(-1, 1, 1, 1), images.flip(-1), images)
        self.padded = F.pad(flipped, (2,) * 4, mode="reflect")
        self.epoch = 0

    def __len__(self):
        return len(self.labels) // self.batch_size

    def __iter__(self):
        n = len(self.labels)
        shifts = torch.randint(-2, 3, (n, 2), generator=self.generator)
        images = torch.empty(n, 3, 32, 32)
        for dy in range(-2, 3):
            for dx in range(-2, 3):
                pick = (shifts[:, 0] == dy) & (shifts[:, 1] == dx)
                images[pick] = self.padded[pick, :, 2 + dy:34 + dy, 2 + dx:34 + dx]
        if self.epoch % 2 == 1:
            images = images.flip(-1)
        self.epoch += 1
        order = torch.randperm(n, generator=self.generator)
        for i in range(len(self)):
            take = order[i * self.batch_size:(i + 1) * self.batch_size]
            yield images[take].contiguous(memory_format=torch.channels_last), self.labels[take]


def evaluate(net, images, labels, tta, autocast):
    def mirror(x):
        return 0.5 * net(x) + 0.5 * net(x.flip(-1))

    def view(x):
        if not tta:
            return net(x)
        padded = F.pad(x, (1,) * 4, mode="reflect")
        shifted = [mirror(padded[:, :, 0:32, 0:32]), mirror(padded[:, :, 2:34, 2:34])]
        return 0.5 * mirror(x) + 0.5 * torch.stack(shifted).mean(0)
    net.eval()
    with torch.no_grad(), autocast():
        logits = torch.cat([view(x.contiguous(memory_format=torch.channels_last)).float()
                            for x in images.split(2000)])
    net.train()
    return (logits.argmax(1) == labels).float().mean().item()


def main():
    from minidl.datasets import cifar10
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=float, default=9.9)
    p.add_argument("--bf16", action="store_true", help="bfloat16 autocast (the reference's float16)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    (x, y), (xt, yt) = cifar10.load_data(args.data_dir)
    train, test = normalized(x), normalized(xt)
    labels, test_labels = torch.tensor(y.ravel()).long(), torch.tensor(yt.ravel()).long()

    def autocast():
        return torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.bf16)

    batch_size = 1024
    net = make_net(train[:5000])
    optimizer = optimizer_for(net, batch_size)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.2, reduction="none")
    loader = Epochs(train, labels, batch_size, generator)
    total = math.ceil(len(loader) * args.epochs)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor(total))
    lookahead = LookaheadState(net)

    log, steps, started = {"args": vars(args), "epochs": []}, 0, time.perf_counter()
    for epoch in range(math.ceil(args.epochs)):
        net[0].bias.requires_grad = epoch < 3
        began = time.perf_counter()
        for images, targets in loader:
            with autocast():
                outputs = net(images)
                loss = loss_fn(outputs.float(), targets).sum()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            steps += 1
            if steps % 5 == 0:
                lookahead.pull(lookahead.decay(steps, total))
            if steps >= total:
                lookahead.pull(1.0)
                break
        seconds = time.perf_counter() - began
        accuracy = evaluate(net, test, test_labels, False, autocast)
        train_acc = (outputs.argmax(1) == targets).float().mean().item()
        log["epochs"].append({"epoch": epoch + 1, "train_seconds": round(seconds, 1),
                              "train_loss": loss.item() / batch_size, "train_accuracy": train_acc,
                              "val_accuracy": accuracy})
        print(f"epoch {epoch + 1}: {seconds:.1f} s, last batch loss {loss.item() / batch_size:.4f} "
              f"accuracy {train_acc:.4f}, test accuracy {accuracy:.4f}", flush=True)
    log["test_accuracy"] = evaluate(net, test, test_labels, False, autocast)
    log["tta_test_accuracy"] = evaluate(net, test, test_labels, True, autocast)
    log["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(f"final test accuracy {log['test_accuracy']:.4f}, with TTA {log['tta_test_accuracy']:.4f}, "
          f"{log['wall_seconds']:.0f} s", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(log, f, indent=1)


if __name__ == "__main__":
    main()
