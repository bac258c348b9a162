"""Cost of Keras 3's RandomElasticTransform (issue 24) in front of keras_cnn: the layer's
forward + backward on a batch of 32x32x3 images (default factor and scale: every drawn image
transformed, the distortion drawn in [0, 1]), as a fraction of one keras_cnn training step on
the same batch (train_on_batch), on one backend; beside it the same work written with batched
torch ops (normal noise, a separable Gaussian conv2d, grid_sample with reflection padding), in
the same run. Contenders alternate, medians of --repeats rounds, since the machine is shared
and noisy. --profile splits the minidl layer into its parts (host draws, noise, blur,
resampling, gradient).

    PYTHONPATH=. python benchmarks/bench_augment_elastic.py [--backend cpu] [--batch 128]
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


def torch_elastic(torch, x, factor=0.5):
    """Keras's elastic transform with batched torch ops on (N, C, H, W) images; factor fixed at
    the mean of the default scale's draws."""
    n, _, h, w = x.shape
    alpha, sigma = max(h, w) * 0.1 * factor, min(h, w) * 0.05 * factor
    size = int(6 * sigma) | 1
    t = torch.arange(size, dtype=torch.float32) - (size - 1) / 2
    taps = torch.exp(-0.5 * (t / sigma) ** 2)
    taps = taps / taps.sum()
    noise = torch.randn(n, 2, h, w) * sigma
    noise = torch.nn.functional.conv2d(noise, taps.view(1, 1, 1, size).expand(2, 1, 1, size),
                                       padding=(0, size // 2), groups=2)
    noise = torch.nn.functional.conv2d(noise, taps.view(1, 1, size, 1).expand(2, 1, size, 1),
                                       padding=(size // 2, 0), groups=2)
    ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32),
                            indexing="ij")
    py, px = ys + alpha * noise[:, 0], xs + alpha * noise[:, 1]
    grid = torch.stack([px / (w - 1) * 2 - 1, py / (h - 1) * 2 - 1], -1)
    out = torch.nn.functional.grid_sample(x, grid, mode="bilinear", padding_mode="reflection",
                                          align_corners=True)
    return out.clamp(0, 255)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    import minidl
    from minidl import layers, zoo
    from minidl.layers.calls import LayerCall, run_backward, run_forward
    minidl.set_backend(args.backend)
    b = minidl.backends.get_backend()
    rng = np.random.default_rng(0)
    x = np.floor(rng.uniform(0, 256, (args.batch, 32, 32, 3))).astype(np.float32)
    y = rng.integers(0, 10, args.batch)
    model = zoo.build("keras_cnn")
    model.compile("rmsprop", "sparse_categorical_crossentropy")
    model.train_on_batch(x / 255, y)   # warm-up: buffers, kernels

    layer = layers.RandomElasticTransform()
    layer.build_once(x.shape[1:])
    layer.attach(b)
    call = LayerCall(layer, layer.backend)   # the context of this one call, reused each step
    device_x, device_dout = b.from_numpy(x), b.from_numpy(np.ones_like(x))

    def augment():
        layer.step_seed = getattr(layer, "step_seed", 0) + 1   # new draws each call
        run_forward(layer, call, device_x, True)
        run_backward(layer, call, device_dout, False)
        b.synchronize()
    augment()

    def forward_only():   # a model's first layer: Keras never differentiates augmentation
        layer.step_seed += 1
        run_forward(layer, call, device_x, True)
        b.synchronize()

    import torch
    torch.set_num_threads(2)
    torch_x = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous()

    ours, forward, theirs, step_times = [], [], [], []
    for _ in range(args.repeats):   # alternate: a model step, the layer, torch, each round
        step_times.append(median_seconds(lambda: model.train_on_batch(x / 255, y), 1, 2))
        ours.append(median_seconds(augment, 1, 5))
        forward.append(median_seconds(forward_only, 1, 5))
        theirs.append(median_seconds(lambda: torch_elastic(torch, torch_x), 1, 5))
    step, ours, forward, theirs = (statistics.median(v) for v in (step_times, ours, forward, theirs))
    print(f"backend {args.backend}, batch {args.batch} of 32x32x3; keras_cnn train step "
          f"{step * 1e3:.2f} ms (median of {args.repeats})")
    print(f"RandomElasticTransform forward+backward {ours * 1e3:.3f} ms = {ours / step:.2%} of a step; "
          f"forward only {forward * 1e3:.3f} ms = {forward / step:.2%}; torch (forward) "
          f"{theirs * 1e3:.3f} ms; minidl forward/torch {forward / theirs:.2f}")
    if args.profile:
        n = args.batch
        scales, sigma = layer.draw(call, n, 32, 32)
        noise = layer.noise(call, scales, 32, 32)
        field = layer.displacement(call, noise, sigma)
        out, dx = b.zeros(x.shape), b.zeros(x.shape)
        parts = {
            "host draws": lambda: layer.draw(call, n, 32, 32),
            "noise (gaussian_noise, scale)": lambda: (layer.noise(call, scales, 32, 32), b.synchronize()),
            "blur (2 passes)": lambda: (layer.displacement(call, noise, sigma), b.synchronize()),
            "resample forward": lambda: (b.image_displace_forward(out, device_x, field, "bilinear",
                                                                  "reflect", 0.0, (0, 255)), b.synchronize()),
            "resample backward": lambda: (b.image_displace_backward(dx, device_dout, field, "bilinear",
                                                                    "reflect"), b.synchronize()),
        }
        for name, fn in parts.items():
            print(f"  {name:26s} {median_seconds(fn, args.repeats, 5) * 1e3:8.3f} ms")


if __name__ == "__main__":
    main()
