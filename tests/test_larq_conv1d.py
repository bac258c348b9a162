"""lq.layers.QuantConv1D on every backend: the forward against larq's formula in numpy (sign of
the input, padded with pad_values for "same", zeros before the sequence for "causal", convolved
with the sign of the kernel), the gradients against QuantConv2D on the (N, 1, L, C) view, binary
inference (lq.convert) against the float path, config, saving and errors."""

import os

import numpy as np
import pytest

import minidl
import minidl.larq as lq
from layer_runs import LayerRun


def larq_sign(x):
    return np.where(x >= 0, 1.0, -1.0).astype(np.float32)


def conv1d_reference(x, kernel, padding, pad_values, stride=1, dilation=1):
    """larq's QuantConv1D(input_quantizer="ste_sign", kernel_quantizer="ste_sign") forward."""
    xq, kq = larq_sign(x), larq_sign(kernel)
    k = kernel.shape[0]
    span = (k - 1) * dilation + 1
    length = x.shape[1]
    if padding == "same":
        out_len = -(-length // stride)
        total = max((out_len - 1) * stride + span - length, 0)
        before, after = total // 2, total - total // 2
        xq = np.pad(xq, ((0, 0), (before, after), (0, 0)), constant_values=pad_values)
    elif padding == "causal":
        xq = np.pad(xq, ((0, 0), (span - 1, 0), (0, 0)))
    out_len = (xq.shape[1] - span) // stride + 1
    out = np.zeros((x.shape[0], out_len, kernel.shape[2]), np.float64)
    for t in range(out_len):
        for j in range(k):
            out[:, t] += xq[:, t * stride + j * dilation].astype(np.float64) @ kq[j].astype(np.float64)
    return out


CASES = [("valid", 0.0, 1, 1), ("same", 0.0, 1, 1), ("same", 1.0, 1, 1), ("same", 1.0, 2, 1),
         ("causal", 0.0, 1, 2), ("valid", 0.0, 1, 2)]


@pytest.mark.parametrize("padding, pad_values, stride, dilation", CASES)
def test_quant_conv1d_forward_and_gradients(backend, padding, pad_values, stride, dilation):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 11, 6)).astype(np.float32)
    x[0, 0, 0] = 0.0                      # larq's sign(0) = +1
    kernel = rng.standard_normal((3, 6, 5)).astype(np.float32)
    kw = dict(input_quantizer="ste_sign", kernel_quantizer="ste_sign", use_bias=False)
    layer = lq.layers.QuantConv1D(5, 3, strides=stride, padding=padding, pad_values=pad_values,
                                  dilation_rate=dilation, **kw)
    layer.build_once(x.shape[1:])
    layer.attach(backend)
    backend.copy_from_host(layer.kernel.weight.value, kernel)
    run = LayerRun(layer)
    y = backend.to_numpy(run.forward(backend.from_numpy(x), True))
    want = conv1d_reference(x, kernel, padding, pad_values, stride, dilation)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)
    dout = rng.standard_normal(y.shape).astype(np.float32)
    dx = backend.to_numpy(run.backward(backend.from_numpy(dout)))
    dkernel = backend.to_numpy(layer.kernel.weight.grad)

    if padding == "causal":
        # QuantConv2D has no causal padding: the float Conv1D on the signs, then the STE's masks
        twin = minidl.layers.Conv1D(5, 3, padding="causal", dilation_rate=dilation, use_bias=False)
        twin.build_once(x.shape[1:])
        twin.attach(backend)
        backend.copy_from_host(twin.kernel.weight.value, larq_sign(kernel))
        run2 = LayerRun(twin)
        y2 = backend.to_numpy(run2.forward(backend.from_numpy(larq_sign(x)), True))
        dx2 = backend.to_numpy(run2.backward(backend.from_numpy(dout))) * (np.abs(x) <= 1)
        dkernel2 = backend.to_numpy(twin.kernel.weight.grad) * (np.abs(kernel) <= 1)
    else:   # QuantConv2D on the (N, 1, L, C) view
        twin = lq.layers.QuantConv2D(5, (1, 3), strides=(1, stride), padding=padding, pad_values=pad_values,
                                     dilation_rate=(1, dilation), **kw)
        twin.build_once((1,) + x.shape[1:])
        twin.attach(backend)
        backend.copy_from_host(twin.kernel.value, kernel[None])
        run2 = LayerRun(twin)
        y2 = backend.to_numpy(run2.forward(backend.from_numpy(x[:, None]), True))[:, 0]
        dx2 = backend.to_numpy(run2.backward(backend.from_numpy(dout[:, None])))[:, 0]
        dkernel2 = backend.to_numpy(twin.kernel.grad)[0]
    np.testing.assert_allclose(y, y2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx, dx2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dkernel, dkernel2, rtol=1e-5, atol=1e-5)
    assert np.any(dx == 0) and np.any(dx != 0)     # the STE's clip mask (|x| > 1) takes effect


@pytest.mark.parametrize("padding, pad_values", [("valid", 0.0), ("same", 0.0), ("same", 1.0), ("causal", 0.0)])
def test_converted_quant_conv1d_predicts_as_the_float_path(active_backend, padding, pad_values):
    kw = dict(input_quantizer="ste_sign", kernel_quantizer="ste_sign", kernel_constraint="weight_clip")
    model = minidl.Sequential([
        minidl.layers.Input((20, 40)),
        lq.layers.QuantConv1D(33, 3, padding=padding, pad_values=pad_values, **kw),
        lq.layers.QuantConv1D(8, 5, padding=padding, pad_values=pad_values, use_bias=False, **kw)])
    x = np.random.default_rng(2).standard_normal((4, 20, 40)).astype(np.float32)
    float_path = model.predict(x, verbose=0)
    lq.convert(model)
    assert len(model.binary_layers) == 2
    np.testing.assert_allclose(model.predict(x, verbose=0), float_path, rtol=1e-5, atol=1e-4)


def test_quant_conv1d_config_saving_precision_and_errors(tmp_path):
    minidl.set_backend("numpy")
    layer = lq.layers.QuantConv1D(4, 3, strides=2, padding="same", pad_values=1.0, input_quantizer="ste_sign",
                                  kernel_quantizer="ste_sign", kernel_constraint="weight_clip")
    config = layer.get_config()
    assert config["kernel_size"] == [3] and config["strides"] == [2] and config["pad_values"] == 1.0
    again = lq.layers.QuantConv1D.from_config(config)
    assert again.get_config() == config
    model = minidl.Sequential([minidl.layers.Input((9, 2)), layer])
    assert layer.get_weights()[0].shape == (3, 2, 4)            # Keras's 1-D kernel layout
    assert layer.kernel.weight.precision == 1                   # what Bop.is_binary_variable reads
    x = np.random.default_rng(0).standard_normal((2, 9, 2)).astype(np.float32)
    path = os.path.join(tmp_path, "conv1d.keras")
    model.save(path)
    np.testing.assert_array_equal(minidl.models.load_model(path).predict(x, verbose=0), model.predict(x, verbose=0))
    printed = []
    lq.models.summary(model, print_fn=printed.append)
    row = next(line for line in "\n".join(printed).splitlines() if line.startswith(f"| {layer.name} "))
    # 24 1-bit weights (3 x 2 x 4) at 5 output steps on a 1-bit input: 120 binarized MACs
    assert row.split()[6:10] == ["24", "4", "0.02", "120"], row
    with pytest.raises(ValueError, match="causal"):
        lq.layers.QuantConv1D(4, 3, padding="causal", pad_values=1.0)
    with pytest.raises(ValueError, match="kernel_size"):
        lq.layers.QuantConv1D(4, (3, 3))
