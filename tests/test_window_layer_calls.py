"""The window layers (depthwise, transposed, 1-D, 3-D convolutions; the poolings, adaptive
poolings, UpSampling2D) keep everything of a call on its LayerCall: two calls of one layer,
their forwards and backwards interleaved as a shared graph layer runs them, give each call's
own output and dL/dinput and the sum of the two calls' weight gradients, on every backend."""

import numpy as np
import pytest

from minidl import layers
from minidl.layers.calls import LayerCall, run_backward, run_forward

from layer_runs import LayerRun

CASES = [
    (lambda: layers.Conv2DTranspose(3, 3, strides=2, padding="same", activation="tanh"), (5, 4, 2)),
    (lambda: layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same"), (5, 4, 2)),
    (lambda: layers.SeparableConv2D(3, 3, strides=2, activation="relu"), (6, 5, 2)),
    (lambda: layers.Conv1D(3, 3, padding="causal", activation="tanh"), (6, 2)),
    (lambda: layers.Conv1DTranspose(3, 3, strides=2), (5, 2)),
    (lambda: layers.DepthwiseConv1D(3, padding="same"), (6, 2)),
    (lambda: layers.SeparableConv1D(3, 3, activation="sigmoid"), (6, 2)),
    (lambda: layers.Conv3D(3, (2, 3, 3), padding="same"), (3, 4, 4, 2)),
    (lambda: layers.Conv3DTranspose(2, 2, strides=2, activation="relu"), (2, 3, 3, 2)),
    (lambda: layers.MaxPooling2D(), (4, 6, 2)),
    (lambda: layers.AveragePooling2D(padding="same"), (5, 5, 2)),
    (lambda: layers.GlobalMaxPooling2D(), (4, 5, 2)),
    (lambda: layers.GlobalAveragePooling2D(), (4, 5, 2)),
    (lambda: layers.MaxPooling1D(), (6, 2)),
    (lambda: layers.AveragePooling1D(3, strides=2, padding="same"), (7, 2)),
    (lambda: layers.GlobalMaxPooling1D(keepdims=True), (6, 2)),
    (lambda: layers.GlobalAveragePooling1D(), (6, 2)),
    (lambda: layers.MaxPooling3D(), (4, 4, 4, 2)),
    (lambda: layers.AveragePooling3D(2, padding="same"), (3, 5, 4, 2)),
    (lambda: layers.GlobalMaxPooling3D(), (2, 3, 4, 2)),
    (lambda: layers.GlobalAveragePooling3D(keepdims=True), (2, 3, 4, 2)),
    (lambda: layers.AdaptiveMaxPooling2D((2, 3)), (5, 7, 2)),
    (lambda: layers.AdaptiveAveragePooling1D(4), (7, 2)),
    (lambda: layers.AdaptiveAveragePooling3D(2), (3, 5, 4, 2)),
    (lambda: layers.UpSampling2D(2, interpolation="bilinear"), (3, 4, 2)),
]


def case_id(case):
    layer = case[0]()
    return type(layer).__name__


def built(make, shape, backend):
    layer = make()
    layer.build_once(shape)
    layer.attach(backend)
    rng = np.random.default_rng(1)
    layer.set_weights([rng.normal(size=w.shape).astype(np.float32) * 0.5 for w in layer.weights])
    return layer


def alone(layer, x, dout, input_grad_needed=True):
    """Output, dL/dx and weight gradients of one call run on its own (copies)."""
    b = layer.backend
    run = LayerRun(layer, input_grad_needed=input_grad_needed)
    y = b.to_numpy(run.forward(b.from_numpy(x), True)).copy()
    dx = run.backward(b.from_numpy(dout))
    dx = None if dx is None else b.to_numpy(dx).copy()
    return y, dx, [b.to_numpy(w.grad).copy() for w in layer.trainable_weights]


@pytest.mark.parametrize("make,shape", CASES, ids=[case_id(c) for c in CASES])
def test_two_interleaved_calls_match_two_separate_runs(active_backend, make, shape):
    import minidl
    b = minidl.get_backend()
    layer = built(make, shape, b)
    rng = np.random.default_rng(2)
    # two batch sizes: each call plans (and sizes its buffers) for its own batch
    x1 = rng.normal(size=(2,) + shape).astype(np.float32)
    x2 = rng.normal(size=(3,) + shape).astype(np.float32)
    d1 = rng.normal(size=(2,) + tuple(layer.output_shape)).astype(np.float32)
    d2 = rng.normal(size=(3,) + tuple(layer.output_shape)).astype(np.float32)
    y1, dx1, g1 = alone(layer, x1, d1)
    y2, dx2, g2 = alone(layer, x2, d2)

    first, second = LayerCall(layer, b, 0), LayerCall(layer, b, 1)
    out1 = run_forward(layer, first, b.from_numpy(x1), True)
    out2 = run_forward(layer, second, b.from_numpy(x2), True)
    back2 = run_backward(layer, second, b.from_numpy(d2), accumulate=False)
    back1 = run_backward(layer, first, b.from_numpy(d1), accumulate=True)
    np.testing.assert_allclose(b.to_numpy(out1), y1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.to_numpy(out2), y2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.to_numpy(back1), dx1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.to_numpy(back2), dx2, rtol=1e-5, atol=1e-6)
    for w, a, c in zip(layer.trainable_weights, g1, g2):
        np.testing.assert_allclose(b.to_numpy(w.grad), a + c, rtol=1e-4, atol=1e-5, err_msg=w.name)

    if layer.trainable_weights:   # a model's first layer: no dL/dinput, the same weight gradients
        _, none, g1_first = alone(layer, x1, d1, input_grad_needed=False)
        assert none is None
        for w, a, c in zip(layer.trainable_weights, g1, g1_first):
            np.testing.assert_allclose(c, a, rtol=1e-5, atol=1e-6, err_msg=w.name)
