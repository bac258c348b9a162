"""minidl's airbench94 recipe step by step beside a plain-PyTorch reimplementation of the
reference airbench94.py's training algorithm (KellerJordan/cifar10-airbench, legacy/airbench94.py;
rewritten here, float32 on the CPU, not the reference's code): the same initial weights (minidl's,
exported into torch), the same batches in the same order, then the largest differences in the
outputs and loss of one batch, and in every weight after each optimizer step (the lr schedule,
Nesterov SGD with airbench's decay / bias scaling, the lookahead pulls, the whitening-bias freeze).

    PYTHONPATH=. python benchmarks/airbench_fidelity.py [--images 512] [--batch-size 128] [--epochs 2]
        [--whiten-bias-epochs 1] [--keras-sgd]

The data: `python /work/shared/datasets/cifar10/to_official.py /tmp/c10air --train 5000 --test 1000`
(or any CIFAR-10 directory, --data). Images are flipped every other one and not translated,
so both sides see the same batches.
"""

import argparse
import warnings

import numpy as np
import torch
import torch.nn.functional as F

import minidl
from minidl.datasets import cifar10
from minidl.recipes import Airbench94
from torch_airbench import LookaheadState, lr_factor, optimizer_for
from torch_airbench import airbench94 as torch_airbench94


def to_torch(model, net):
    """Copy minidl's weights (model.weights order) into the torch twin's state."""
    state = [v for k, v in net.state_dict().items() if not k.endswith("num_batches_tracked")
             and not (k.endswith(".weight") and "norm" in k)]
    weights = [w.numpy() if hasattr(w, "numpy") else w for w in model.get_weights()]
    assert len(state) == len(weights), (len(state), len(weights))
    with torch.no_grad():
        for target, value in zip(state, weights):
            value = value.transpose(3, 2, 0, 1) if value.ndim == 4 else value.T if value.ndim == 2 else value
            target.copy_(torch.from_numpy(np.ascontiguousarray(value)))
    return state


def largest_differences(model, state):
    out = []
    for w, t in zip(model.get_weights(), state):
        w = w.transpose(3, 2, 0, 1) if w.ndim == 4 else w.T if w.ndim == 2 else w
        t = t.detach().numpy()
        out.append(float(np.abs(w - t).max() / (np.abs(t).max() + 1e-12)))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="/tmp/c10air")
    parser.add_argument("--images", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--whiten-bias-epochs", type=int, default=1)
    parser.add_argument("--weight-decay", type=float, default=0.0153, help="airbench's, per 1024 examples")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--keras-sgd", action="store_true",
                        help="the torch side steps with Keras's SGD form (lr inside the velocity, "
                             "decoupled decay) instead of the reference's torch.optim.SGD: tells how much "
                             "of the difference is the optimizer's form")
    args = parser.parse_args()
    minidl.set_backend(args.backend)
    minidl.utils.set_random_seed(0)
    (x_train, y_train), _ = cifar10.load_data(args.data)
    x_uint8, y = x_train[:args.images], np.asarray(y_train[:args.images]).reshape(-1).astype(np.int64)
    recipe = Airbench94(epochs=args.epochs, batch_size=args.batch_size,
                        whiten_bias_epochs=args.whiten_bias_epochs, weight_decay=args.weight_decay)
    steps_per_epoch = args.images // args.batch_size
    x_uint8, y = x_uint8[:steps_per_epoch * args.batch_size], y[:steps_per_epoch * args.batch_size]  # full batches
    x = recipe.normalize(x_uint8)
    x[1::2] = x[1::2, :, ::-1]      # fixed flips, no translation: the same batches on both sides
    total = steps_per_epoch * args.epochs
    model = recipe.build(x_uint8, steps_per_epoch)

    net = torch_airbench94().train()
    state = to_torch(model, net)
    xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    yt = torch.from_numpy(y)

    # one batch: forward outputs and loss (train mode, as fit sees them); the weights are put
    # back after it (the lookahead's slow copies of the BatchNorm statistics are the compiled ones)
    initial = model.get_weights()
    with torch.no_grad():
        ref = net(xt[:args.batch_size])
    out = np.asarray(model(x[:args.batch_size], training=True))
    print(f"forward (train mode), batch {args.batch_size}: max |minidl - torch| = "
          f"{np.abs(out - ref.numpy()).max():.3g} (outputs up to {ref.abs().max():.3g})")
    to_torch(model, net)   # the call above moved both sides' BatchNorm statistics alike; resync
    ref_loss = F.cross_entropy(net(xt[:args.batch_size]), yt[:args.batch_size], label_smoothing=0.2).item()
    mini_loss = float(np.asarray(model.loss(y[:args.batch_size], out)))
    print(f"loss of batch 0 (train mode, label smoothing {recipe.label_smoothing}): torch {ref_loss:.7f} "
          f"minidl {mini_loss:.7f}")
    model.set_weights(initial)
    to_torch(model, net)

    # the reference's optimizer and schedules, for `total` steps
    momentum = recipe.momentum
    kilostep = 1024 * (1 + 1 / (1 - momentum))
    lr = recipe.learning_rate / kilostep
    optimizer = optimizer_for(net, args.batch_size, momentum, recipe.learning_rate, recipe.weight_decay,
                              recipe.bias_scaler)
    get_lr = lr_factor(total)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, get_lr)
    lookahead = LookaheadState(net)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=recipe.label_smoothing, reduction="none")

    decoupled = recipe.weight_decay / (recipe.learning_rate * (1 - momentum))   # Keras's SGD form's decay

    @torch.no_grad()
    def keras_sgd_step(optimizer, factor):
        # Keras's Nesterov SGD on the summed loss: v = m v - lr g; w += m v - lr g, after the
        # decoupled decay w -= lr_mean * weight_decay * w (lr_mean: the batch-mean loss's rate)
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                v = optimizer.state[p].setdefault("keras_velocity", torch.zeros_like(p))
                p.mul_(1 - factor * lr * args.batch_size * decoupled)
                v.mul_(momentum).add_(p.grad, alpha=-group["lr"])
                p.add_(momentum * v - group["lr"] * p.grad)

    # torch: `total` steps over the batches in order
    torch_states, step = [], 0
    for epoch in range(args.epochs):
        net[0].bias.requires_grad = epoch < recipe.whiten_bias_epochs
        for i in range(steps_per_epoch):
            batch = slice(i * args.batch_size, (i + 1) * args.batch_size)
            loss = loss_fn(net(xt[batch]), yt[batch]).sum()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if args.keras_sgd:
                keras_sgd_step(optimizer, get_lr(step))
            else:
                optimizer.step()
            with warnings.catch_warnings():   # --keras-sgd steps without optimizer.step()
                warnings.simplefilter("ignore", UserWarning)
                scheduler.step()
            step += 1
            if step % 5 == 0:
                lookahead.pull(lookahead.decay(step, total))
            torch_states.append([t.detach().clone() for t in state])
    lookahead.pull(1.0)
    final_torch = [t.detach().clone() for t in state]

    # minidl: the recipe's fit on the same batches, no shuffle
    class Record(minidl.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            step = self.model.optimizer.iterations
            diffs = largest_differences(self.model, torch_states[step - 1])
            worst = int(np.argmax(diffs))
            print(f"step {step}: minidl lr {self.model.optimizer.current_learning_rate():.5f} torch "
                  f"{get_lr(step) * lr * args.batch_size:.5f}; worst relative weight "
                  f"difference {diffs[worst]:.3g} at {paths[worst]}, whiten/bias {diffs[1]:.3g}, "
                  f"group1_norm1/beta {diffs[3]:.3g}, head {diffs[-1]:.3g}")
    paths = [f"{layer.name}/{w.name}" for layer in model.layers for w in layer.weights]
    model.fit(x, y, batch_size=args.batch_size, epochs=args.epochs, shuffle=False, verbose=0,
              callbacks=recipe.callbacks(steps_per_epoch) + [Record()])
    paths = [f"{layer.name}/{w.name}" for layer in model.layers for w in layer.weights]
    diffs = largest_differences(model, final_torch)
    print(f"after {total} steps (+ the final pull-back), relative max |minidl - torch| per weight:")
    for path, d in zip(paths, diffs):
        print(f"  {path:32s} {d:.3g}")


if __name__ == "__main__":
    main()
