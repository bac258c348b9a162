"""Training-step time of a Linear layer written with minidl.ops against Dense, (batch 128,
512 -> 512): python benchmarks/custom_layer_step.py [backend] [steps]."""

import sys
import time

import numpy as np

import minidl
from minidl import layers, ops
from minidl.models import Sequential


class Linear(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units))
        self.b = self.add_weight(shape=(self.units,), initializer="zeros")

    def call(self, inputs):
        return ops.matmul(inputs, self.w) + self.b


def compiled(layer):
    m = Sequential([layers.Input((512,)), layer])
    m.compile(optimizer="sgd", loss="mse")
    return m


def block_time(m, x, y, steps):
    m.backend.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        m.train_on_batch(x, y)
    m.backend.synchronize()
    return (time.perf_counter() - start) / steps


if __name__ == "__main__":
    minidl.set_backend(sys.argv[1] if len(sys.argv) > 1 else "cpu")
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 512)).astype(np.float32)
    y = rng.normal(size=(128, 512)).astype(np.float32)
    dense, linear = compiled(layers.Dense(512)), compiled(Linear(512))
    for m in (dense, linear):
        block_time(m, x, y, 3)     # warm-up: buffers, kernels, the opencl GEMM tuning
    # alternate the two, best block of each: a shared machine's noise only adds time
    best = {"dense": float("inf"), "linear": float("inf")}
    for _ in range(5):
        best["dense"] = min(best["dense"], block_time(dense, x, y, steps))
        best["linear"] = min(best["linear"], block_time(linear, x, y, steps))
    print(f"{minidl.get_backend().name}: Dense {best['dense'] * 1e3:.2f} ms/step, Linear from ops "
          f"{best['linear'] * 1e3:.2f} ms/step, ratio {best['linear'] / best['dense']:.2f}")
