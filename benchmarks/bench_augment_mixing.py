"""Cost of Keras 3's RandomErasing, RandomGaussianBlur, RandomSharpness, MixUp and CutMix
(issue 24) in front of keras_cnn: each layer's forward + backward (host draws, upload, backend
op) on a batch of 32x32x3 images, as a fraction of one keras_cnn training step on the same
batch (train_on_batch), on one backend; beside it the same layer written with torch tensor ops
(what Keras's torch backend runs), in the same run. Contenders alternate, medians of
--repeats rounds, since the machine is shared and noisy.

    PYTHONPATH=. python benchmarks/bench_augment_mixing.py [--backend cpu] [--batch 128] [--repeats 15]
"""

import argparse
import statistics

import numpy as np

from bench_augment import median_seconds


def torch_versions(torch):
    """The same layers with batched torch ops, as Keras's torch backend computes them."""
    F = torch.nn.functional

    def boxes(x, ratio_w, ratio_h):
        n, _, h, w = x.shape
        x0 = torch.rand(n) * (w - ratio_w * w)
        y0 = torch.rand(n) * (h - ratio_h * h)
        cols, rows = torch.arange(w).view(1, 1, 1, w), torch.arange(h).view(1, 1, h, 1)
        return ((cols >= x0.view(-1, 1, 1, 1)) & (cols < (x0 + ratio_w * w).view(-1, 1, 1, 1))
                & (rows >= y0.view(-1, 1, 1, 1)) & (rows < (y0 + ratio_h * h).view(-1, 1, 1, 1)))

    def erasing(x):
        size = torch.sqrt(torch.rand(x.shape[0], 2) * 0.31 + 0.02)
        mask = boxes(x, size[:, 0], size[:, 1]) & (torch.rand(x.shape[0], 1, 1, 1) < torch.rand(x.shape[0], 1, 1, 1))
        return torch.where(mask, torch.clip(torch.randn_like(x) * 255, 0, 255), x)

    def filtered(x, kernel, weight):
        c = x.shape[1]
        smooth = F.conv2d(x, kernel.expand(c, 1, *kernel.shape), padding=kernel.shape[0] // 2, groups=c)
        return torch.clip(x + weight.view(-1, 1, 1, 1) * (smooth - x), 0, 255)

    def blur(x):
        sigma = torch.rand(2) + 1e-6
        taps = [torch.exp(-0.5 * (torch.arange(3) - 1.0) ** 2 / s ** 2) for s in sigma]
        kernel = torch.outer(taps[1] / taps[1].sum(), taps[0] / taps[0].sum())
        apply = (torch.rand(x.shape[0]) < torch.rand(x.shape[0])).float()
        return filtered(x, kernel, apply)

    def sharpness(x):
        kernel = torch.tensor([[1.0, 1, 1], [1, 5, 1], [1, 1, 1]]) / 13
        return filtered(x, kernel, 1 - 2 * torch.rand(x.shape[0]) * 0.8)

    def mix_up(x):
        w = torch.distributions.Beta(0.2, 0.2).sample((x.shape[0],)).view(-1, 1, 1, 1)
        return w * x + (1 - w) * x[torch.randperm(x.shape[0])]

    def cut_mix(x):
        alpha = float(torch.rand(())) + 1e-6
        ratio = torch.sqrt(1 - torch.distributions.Beta(alpha, alpha).sample((x.shape[0],)))
        return torch.where(boxes(x, ratio, ratio), x[torch.randperm(x.shape[0])], x)

    return {"RandomErasing": erasing, "RandomGaussianBlur": blur, "RandomSharpness": sharpness,
            "MixUp": mix_up, "CutMix": cut_mix}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()

    import minidl
    from minidl import layers, zoo
    from minidl.layers.calls import LayerCall, run_backward, run_forward
    minidl.set_backend(args.backend)
    b = minidl.backends.get_backend()
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, (args.batch, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, 10, args.batch)
    model = zoo.build("keras_cnn")
    model.compile("rmsprop", "sparse_categorical_crossentropy")
    model.train_on_batch(x / 255, y)   # warm-up: buffers, kernels

    candidates = {"RandomErasing": layers.RandomErasing(), "RandomGaussianBlur": layers.RandomGaussianBlur(),
                  "RandomSharpness": layers.RandomSharpness(0.8), "MixUp": layers.MixUp(),
                  "CutMix": layers.CutMix()}
    device_x, device_dout = b.from_numpy(x), b.from_numpy(np.ones_like(x))
    steps = {}
    for name, layer in candidates.items():
        layer.build_once(x.shape[1:])
        layer.attach(b)
        call = LayerCall(layer, layer.backend)   # the context of this one call, reused each step

        def augment(layer=layer, call=call):
            layer.step_seed += 1   # new draws each call
            run_forward(layer, call, device_x, True)
            run_backward(layer, call, device_dout, False)
            b.synchronize()
        augment()   # warm-up: buffers, kernels
        steps[name] = augment

    try:
        import torch
        torch_x = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous()
        torch_ops = torch_versions(torch)
    except ImportError:
        torch_ops, torch_x = {}, None

    results = {name: [] for name in candidates}
    torch_results = {name: [] for name in torch_ops}
    step_times = []
    for _ in range(args.repeats):   # alternate: a model step, then each layer, each round
        step_times.append(median_seconds(lambda: model.train_on_batch(x / 255, y), 1, 2))
        for name, augment in steps.items():
            results[name].append(median_seconds(augment, 1, 5))
            if name in torch_ops:
                torch_results[name].append(median_seconds(lambda: torch_ops[name](torch_x), 1, 5))
    step = statistics.median(step_times)
    print(f"backend {args.backend}, batch {args.batch} of 32x32x3; keras_cnn train step "
          f"{step * 1e3:.2f} ms (median of {args.repeats})")
    print(f"{'layer':20s} {'minidl ms':>10s} {'of step':>8s} {'torch ms':>9s} {'minidl/torch':>12s}")
    for name in candidates:
        ours = statistics.median(results[name])
        line = f"{name:20s} {ours * 1e3:10.3f} {ours / step:8.2%}"
        if name in torch_results:
            theirs = statistics.median(torch_results[name])
            line += f" {theirs * 1e3:9.3f} {ours / theirs:12.2f}"
        print(line)


if __name__ == "__main__":
    main()
