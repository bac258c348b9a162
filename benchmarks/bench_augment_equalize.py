"""Cost of Keras 3's Equalization, ContrastLimitedAdaptiveHistogramEqualization,
RandomPerspective, RandAugment and AugMix (issue 24; RandAugment and AugMix's all_ops
where RandomSharpness is there) in front of keras_cnn: each layer's forward + backward on a
batch of 32x32x3 images, as a fraction of one keras_cnn training step on the same batch
(train_on_batch), on one backend; beside it the same image work written with batched torch
ops (bincount / scatter_add histograms, grid_sample for the perspective), in the same run.
Contenders alternate, medians of --repeats rounds, since the machine is shared and noisy.

    PYTHONPATH=. python benchmarks/bench_augment_equalize.py [--backend cpu] [--batch 128]
    PYTHONPATH=. python benchmarks/bench_augment_equalize.py --in-model [--backend cpu]

--in-model measures what a training step really pays: keras_cnn with the layer in front of its
first convolution (a Sequential, the layer right after the Input), train_on_batch, against plain
keras_cnn, alternating. There the layer runs forward only: nothing upstream of it has weights,
so no gradient is taken through it.
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
    """The three image changes with batched torch ops on (N, C, H, W) images in 0..255."""
    def equalize(x):
        n, c = x.shape[:2]
        bins = torch.clamp((x * 255 / 255).to(torch.int64), 0, 255)            # (n, c, h, w)
        flat = bins.transpose(0, 1).reshape(c, -1)
        hist = torch.zeros(c, 256, dtype=torch.int64).scatter_add_(1, flat, torch.ones_like(flat))
        cdf = hist.cumsum(1)
        cdf_min = torch.where(cdf > 0, cdf, cdf[:, -1:]).min(1, keepdim=True).values
        lut = torch.round((cdf - cdf_min) * 255.0 / (cdf[:, -1:] - cdf_min).clamp(min=1)).clamp(0, 255)
        return torch.gather(lut, 1, flat.float().to(torch.int64)).reshape(c, n, *x.shape[2:]).transpose(0, 1)

    def clahe(x, grid=8, clip=4.0):
        n, c, h, w = x.shape
        th, tw = -(-h // grid), -(-w // grid)
        levels = torch.clamp(x.to(torch.int64), 0, 255)
        tiles = levels.reshape(n, c, grid, th, grid, tw).permute(0, 1, 2, 4, 3, 5).reshape(n, c, grid, grid, -1)
        hist = torch.zeros(n, c, grid, grid, 256).scatter_add_(-1, tiles, torch.ones(tiles.shape))
        limit = float(int(clip * th * tw / 256))
        clipped = hist.clamp(max=limit)
        hist = clipped + (hist - clipped).sum(-1, keepdim=True) / 256
        cdf = hist.cumsum(-1)
        cdf_min = cdf.min(-1, keepdim=True).values
        cdf = ((cdf - cdf_min) * 255 / (th * tw - cdf_min).clamp(min=1)).clamp(0, 255)
        cdf = torch.nn.functional.pad(cdf.permute(0, 1, 4, 2, 3).reshape(n, c * 256, grid, grid), (1, 1, 1, 1),
                                      mode="replicate").reshape(n, c, 256, grid + 2, grid + 2)
        gy = (torch.arange(h, dtype=torch.float32) - th / 2) / th + 1
        gx = (torch.arange(w, dtype=torch.float32) - tw / 2) / tw + 1
        y0, x0 = gy.floor().long().clamp(0, grid + 1), gx.floor().long().clamp(0, grid + 1)
        y1, x1 = (y0 + 1).clamp(max=grid + 1), (x0 + 1).clamp(max=grid + 1)
        wy, wx = (gy - gy.floor())[:, None], (gx - gx.floor())[None, :]
        table = cdf.permute(0, 1, 3, 4, 2)                      # (n, c, gh+2, gw+2, 256)
        bi, ci = torch.arange(n)[:, None, None, None], torch.arange(c)[None, :, None, None]

        def at(ys, xs):
            return table[bi, ci, ys[:, None], xs[None, :], levels]
        top = at(y0, x0) * (1 - wx) + at(y0, x1) * wx
        bottom = at(y1, x0) * (1 - wx) + at(y1, x1) * wx
        return top * (1 - wy) + bottom * wy

    def perspective(x):
        n, _, h, w = x.shape
        f = (torch.rand(n, 4, 2) - 0.5)
        start = torch.tensor([[0.0, 0.0], [w - 1, 0.0], [0.0, h - 1], [w - 1, h - 1]]).expand(n, 4, 2)
        end = start + start * f
        ex, ey, sx, sy = end[..., 0], end[..., 1], start[..., 0], start[..., 1]
        zeros, ones = torch.zeros_like(ex), torch.ones_like(ex)
        rows = torch.stack([torch.stack([ex, ey, ones, zeros, zeros, zeros, -sx * ex, -sx * ey], -1),
                            torch.stack([zeros, zeros, zeros, ex, ey, ones, -sy * ex, -sy * ey], -1)], 2)
        t = torch.linalg.solve(rows.reshape(n, 8, 8), torch.stack([sx, sy], -1).reshape(n, 8))
        ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32),
                                indexing="ij")
        t = t[:, :, None, None]
        k = t[:, 6] * xs + t[:, 7] * ys + 1
        px, py = (t[:, 0] * xs + t[:, 1] * ys + t[:, 2]) / k, (t[:, 3] * xs + t[:, 4] * ys + t[:, 5]) / k
        grid = torch.stack([px / (w - 1) * 2 - 1, py / (h - 1) * 2 - 1], -1)
        return torch.nn.functional.grid_sample(x, grid, mode="bilinear", padding_mode="zeros",
                                               align_corners=True)

    return {"Equalization": equalize, "CLAHE": clahe, "RandomPerspective": perspective}


def in_model(args):
    """Each layer's share of a keras_cnn training step, measured inside the step."""
    import minidl
    from minidl import layers, zoo
    from minidl.layers.preprocessing_augmix import AugMix
    from minidl.layers.preprocessing_randaugment import RandAugment
    minidl.set_backend(args.backend)
    rng = np.random.default_rng(0)
    x = np.floor(rng.uniform(0, 256, (args.batch, 32, 32, 3))).astype(np.float32)
    y = rng.integers(0, 10, args.batch)
    candidates = {"keras_cnn alone": None, "Equalization": layers.Equalization(),
                  "CLAHE": layers.ContrastLimitedAdaptiveHistogramEqualization(),
                  "RandomPerspective": layers.RandomPerspective(),
                  "RandomElasticTransform": layers.RandomElasticTransform(),
                  "RandAugment": RandAugment(), "AugMix": AugMix()}
    models = {}
    for name, layer in candidates.items():
        front = [layers.Input((32, 32, 3))] + ([layer] if layer is not None else [])
        model = minidl.Sequential(front + zoo.build("keras_cnn").layers)
        model.compile("rmsprop", "sparse_categorical_crossentropy")
        model.train_on_batch(x, y)   # warm-up: buffers, kernels
        models[name] = model
    times = {name: [] for name in models}
    for _ in range(args.repeats):   # alternate: each model's step once a round
        for name, model in models.items():
            times[name].append(median_seconds(lambda: model.train_on_batch(x, y), 1, 2))
    base = statistics.median(times["keras_cnn alone"])
    print(f"backend {args.backend}, batch {args.batch} of 32x32x3; keras_cnn train step "
          f"{base * 1e3:.2f} ms (median of {args.repeats})")
    print(f"{'layer in front':24s} {'step ms':>9s} {'cost':>8s}")
    for name in candidates:
        if name != "keras_cnn alone":
            step = statistics.median(times[name])
            print(f"{name:24s} {step * 1e3:9.2f} {(step - base) / base:8.2%}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--in-model", action="store_true",
                        help="each layer's cost inside a keras_cnn training step")
    args = parser.parse_args()
    if args.in_model:
        in_model(args)
        return

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

    candidates = {"Equalization": layers.Equalization(),
                  "CLAHE": layers.ContrastLimitedAdaptiveHistogramEqualization(),
                  "RandomPerspective": layers.RandomPerspective()}
    from minidl.layers.preprocessing_augmix import AugMix
    from minidl.layers.preprocessing_randaugment import RandAugment
    try:   # their RandomSharpness lives in augment_filters.py
        candidates["RandAugment"] = RandAugment()
        candidates["AugMix"] = AugMix()
    except ImportError:
        candidates["AugMix(all_ops=False)"] = AugMix(all_ops=False)
    device_x, device_dout = b.from_numpy(x), b.from_numpy(np.ones_like(x))
    steps = {}
    for name, layer in candidates.items():
        layer.build_once(x.shape[1:])
        layer.attach(b)
        call = LayerCall(layer, layer.backend)   # the context of this one call, reused each step

        def augment(layer=layer, call=call, backward=True):
            layer.step_seed = getattr(layer, "step_seed", 0) + 1   # new draws each call
            run_forward(layer, call, device_x, True)
            if backward:
                run_backward(layer, call, device_dout, False)
            b.synchronize()
        augment()
        steps[name] = augment

    try:
        import torch
        torch.set_num_threads(2)
        torch_x = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous()
        torch_ops = torch_versions(torch)
    except ImportError:
        torch_ops, torch_x = {}, None

    results = {name: [] for name in candidates}
    forward_only = {name: [] for name in candidates}
    torch_results = {name: [] for name in torch_ops}
    step_times = []
    for _ in range(args.repeats):   # alternate: a model step, then each layer, each round
        step_times.append(median_seconds(lambda: model.train_on_batch(x / 255, y), 1, 2))
        for name, augment in steps.items():
            results[name].append(median_seconds(augment, 1, 5))
            forward_only[name].append(median_seconds(lambda: augment(backward=False), 1, 5))
            if name in torch_ops:
                torch_results[name].append(median_seconds(lambda: torch_ops[name](torch_x), 1, 5))
    step = statistics.median(step_times)
    print(f"backend {args.backend}, batch {args.batch} of 32x32x3; keras_cnn train step "
          f"{step * 1e3:.2f} ms (median of {args.repeats})")
    # "forward": what a training step pays with the layer right after the Input (no gradient
    # is taken through it there; --in-model measures that directly)
    print(f"{'layer':20s} {'minidl ms':>10s} {'of step':>8s} {'forward':>8s} {'torch ms':>9s} "
          f"{'minidl/torch':>12s}")
    for name in candidates:
        ours = statistics.median(results[name])
        forward = statistics.median(forward_only[name])
        line = f"{name:20s} {ours * 1e3:10.3f} {ours / step:8.2%} {forward / step:8.2%}"
        if name in torch_results:
            theirs = statistics.median(torch_results[name])
            line += f" {theirs * 1e3:9.3f} {ours / theirs:12.2f}"
        print(line)


if __name__ == "__main__":
    main()
