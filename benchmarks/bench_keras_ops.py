"""A few of the keras.ops functions minidl composes from backend ops, forward + backward, beside
PyTorch's fused versions in the same process (the two contenders alternate, best of the rounds).

    python benchmarks/bench_keras_ops.py [--backend cpu] [--rounds 7] [--threads 2]

Prints ms per forward + backward for minidl and torch and their ratio (minidl / torch).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import minidl  # noqa: E402
from minidl import autodiff, ops  # noqa: E402
from minidl.autodiff import Tensor  # noqa: E402

RNG = np.random.default_rng(0)


def arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


IDS = RNG.integers(0, 64, 4096).astype(np.int32)
# name: (minidl fn of Tensors, torch fn of tensors, inputs)
CASES = {
    "layer_normalization 256x1024": (lambda x: ops.nn.layer_normalization(x), lambda x: F.layer_norm(x, (1024,), eps=1e-7),
                                     [arr(256, 1024)]),
    "rms_normalization 256x1024": (lambda x: ops.nn.rms_normalization(x), lambda x: F.rms_norm(x, (1024,), eps=1e-7),
                                   [arr(256, 1024)]),
    "image.resize 16x64x64x3 -> 128": (lambda x: ops.image.resize(x, (128, 128)),
                                       lambda x: F.interpolate(x, (128, 128), mode="bilinear", align_corners=False),
                                       [arr(16, 64, 64, 3)]),
    "extract_patches 16x64x64x3 p8": (lambda x: ops.image.extract_patches(x, 8),
                                      lambda x: x.unfold(1, 8, 8).unfold(2, 8, 8), [arr(16, 64, 64, 3)]),
    "segment_sum 4096x256 -> 64": (lambda x: ops.segment_sum(x, IDS, 64),
                                   lambda x: torch.zeros(64, 256).index_add(0, torch.from_numpy(IDS).long(), x),
                                   [arr(4096, 256)]),
    "dot_product_attention 8x128x4x64": (lambda q, k, v: ops.nn.dot_product_attention(q, k, v),
                                         lambda q, k, v: F.scaled_dot_product_attention(
                                             q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2),
                                         [arr(8, 128, 4, 64), arr(8, 128, 4, 64), arr(8, 128, 4, 64)]),
    "depth_to_space 16x32x32x64 b2": (lambda x: ops.nn.depth_to_space(x, 2), lambda x: F.pixel_shuffle(x, 2),
                                      [arr(16, 32, 32, 64)]),
    "nanmean 1024x1024 axis 1": (lambda x: ops.nanmean(x, axis=1), lambda x: torch.nanmean(x, dim=1), [arr(1024, 1024)]),
}


def minidl_step(backend, fn, arrays):
    ts = [Tensor(backend.from_numpy(a), backend, requires_grad=True) for a in arrays]
    tape = autodiff.Tape(backend)
    with autodiff.on_backend(backend), autodiff.recording(tape):
        out = fn(*ts)
    grads = tape.gradients([out], [ops.ones_like(out)], ts)
    backend.synchronize()
    return grads


def torch_step(fn, tensors):
    for t in tensors:
        t.grad = None
    out = fn(*tensors)
    out.backward(torch.ones_like(out))


def best_ms(run, rounds):
    run()   # warm up
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return 1000 * min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    backend = minidl.set_backend(args.backend)
    print(f"{'op (forward + backward)':36s} {'minidl ' + args.backend:>12s} {'torch':>9s} {'ratio':>7s}")
    for name, (mfn, tfn, arrays) in CASES.items():
        tensors = []
        for a in arrays:
            t = torch.from_numpy(a.copy())
            if "resize" in name or "depth_to_space" in name:
                t = t.permute(0, 3, 1, 2).contiguous()   # torch's NCHW layout
            tensors.append(t.requires_grad_(True))
        m_ms, t_ms = [], []
        for _ in range(3):   # alternate the contenders: the machine is shared
            m_ms.append(best_ms(lambda: minidl_step(backend, mfn, arrays), args.rounds))
            t_ms.append(best_ms(lambda: torch_step(tfn, tensors), args.rounds))
        m, t = min(m_ms), min(t_ms)
        print(f"{name:36s} {m:12.2f} {t:9.2f} {m / t:7.2f}")


if __name__ == "__main__":
    main()
