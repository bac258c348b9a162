"""Cost of Keras 3's colour augmentation layers (issue 24) in front of keras_cnn: each layer's
forward + backward on a batch of 32x32x3 images, as a fraction of one keras_cnn training step
on the same batch (train_on_batch), on one backend; beside it the same colour change written
with torch tensor ops (what Keras's torch backend runs), in the same run. Contenders alternate,
medians of --repeats rounds, since the machine is shared and noisy.

    PYTHONPATH=. python benchmarks/bench_augment.py [--backend cpu] [--batch 64] [--repeats 15]
"""

import argparse
import statistics
import time

import numpy as np


def median_seconds(fn, repeats, inner):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times)


def torch_versions(torch):
    """The same colour changes with batched torch ops (per-image draws as Keras makes them)."""
    def gray(x):
        return (0.2989 * x[:, 0:1] + 0.587 * x[:, 1:2]) + 0.114 * x[:, 2:3]

    def grayscale(x):
        apply = torch.rand(x.shape[0], 1, 1, 1) < 0.5
        return torch.where(apply, gray(x).expand_as(x), x)

    def invert(x):
        apply = torch.rand(x.shape[0], 1, 1, 1) < torch.rand(x.shape[0], 1, 1, 1)
        return torch.where(apply, 255.0 - x, x)

    def solarize(x):
        add = torch.rand(x.shape[0], 1, 1, 1) * 76.0
        threshold = torch.rand(x.shape[0], 1, 1, 1) * 204.0
        v = torch.clip(x + add, 0, 255)
        return torch.where(v < threshold, v, 255.0 - v)

    def degenerate(x):
        f = torch.rand(x.shape[0], 1, 1, 1) * 1.8 - 0.9
        return torch.clip(x + f * (gray(x) - x), 0, 255)

    return {"RandomGrayscale": grayscale, "RandomInvert": invert, "Solarization": solarize,
            "RandomColorDegeneration": degenerate}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()

    import minidl
    from minidl import layers, zoo
    minidl.set_backend(args.backend)
    b = minidl.backends.get_backend()
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, (args.batch, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, 10, args.batch)
    model = zoo.build("keras_cnn")
    model.compile("rmsprop", "sparse_categorical_crossentropy")
    model.train_on_batch(x / 255, y)   # warm-up: buffers, kernels

    candidates = {"RandomGrayscale": layers.RandomGrayscale(), "RandomInvert": layers.RandomInvert(),
                  "RandomPosterization": layers.RandomPosterization(4),
                  "Solarization": layers.Solarization(0.3, 0.8),
                  "RandomColorDegeneration": layers.RandomColorDegeneration(0.9),
                  "RandomSaturation": layers.RandomSaturation(0.8), "RandomHue": layers.RandomHue(0.5),
                  "RandomColorJitter": layers.RandomColorJitter(brightness_factor=0.2, contrast_factor=0.2,
                                                                saturation_factor=0.5, hue_factor=0.3),
                  "AutoContrast": layers.AutoContrast(), "RandomShear": layers.RandomShear(0.3, 0.3)}
    device_x, device_dout = b.from_numpy(x), b.from_numpy(np.ones_like(x))
    steps = {}
    for name, layer in candidates.items():
        layer.build_once(x.shape[1:])
        layer.attach(b)

        from minidl.layers.calls import LayerCall, run_backward, run_forward
        call = LayerCall(layer, layer.backend)   # the context of this one call, reused each step

        def augment(layer=layer, call=call):
            layer.step_seed = getattr(layer, "step_seed", 0) + 1   # new draws each call
            run_forward(layer, call, device_x, True)
            run_backward(layer, call, device_dout, False)
            b.synchronize()
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
    print(f"{'layer':26s} {'minidl ms':>10s} {'of step':>8s} {'torch ms':>9s} {'minidl/torch':>12s}")
    for name in candidates:
        ours = statistics.median(results[name])
        line = f"{name:26s} {ours * 1e3:10.3f} {ours / step:8.2%}"
        if name in torch_results:
            theirs = statistics.median(torch_results[name])
            line += f" {theirs * 1e3:9.3f} {ours / theirs:12.2f}"
        print(line)


if __name__ == "__main__":
    main()
