"""minidl.larq.layers on every backend: outputs and gradients against the float layers run on
hand-quantized (and, for pad_values, hand-padded) numpy arrays with larq's straight-through
masks; training, constraints, saving and lq.models.summary."""

import io
import os

import numpy as np
import pytest

import minidl
import minidl.larq as lq
from minidl.backends.numpy_backend import NumpyBackend
from minidl.layers import Conv2D, Dense, DepthwiseConv2D, SeparableConv2D
from layer_runs import LayerRun


def larq_sign(x):
    return np.where(x >= 0, 1.0, -1.0).astype(np.float32)


def ste_mask(x, clip=1.0):
    return (np.abs(x) <= clip).astype(np.float32)


def run(layer, backend, x, weights, dout):
    """(output, dx, {weight name: grad}) of one forward and backward on `backend`."""
    layer.build_once(x.shape[1:])
    layer.attach(backend)
    for w, value in zip(layer.weights, weights):
        backend.copy_from_host(w.value, value)
    run = LayerRun(layer)
    y = run.forward(backend.from_numpy(x), True)
    dx = run.backward(backend.from_numpy(dout))
    host = backend.to_numpy
    return host(y), host(dx), {w.name: host(w.grad) for w in layer.trainable_weights}


def reference(layer, x, weights, dout):
    return run(layer, NumpyBackend("float64"), x.astype(np.float64),
               [w.astype(np.float64) for w in weights], dout.astype(np.float64))


def assert_close(got, want, what):
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, err_msg=what)


def test_quant_dense(backend):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 13)).astype(np.float32) * 1.5
    kernel, bias = rng.standard_normal((13, 7)).astype(np.float32), rng.standard_normal(7).astype(np.float32)
    dout = rng.standard_normal((6, 7)).astype(np.float32)
    layer = lq.layers.QuantDense(7, input_quantizer="ste_sign", kernel_quantizer="ste_sign",
                                 kernel_constraint="weight_clip")
    y, dx, grads = run(layer, backend, x, [kernel, bias], dout)
    want_y, want_dxq, want = reference(Dense(7), larq_sign(x), [larq_sign(kernel), bias], dout)
    assert_close(y, want_y, "output")
    assert_close(dx, want_dxq * ste_mask(x), "dx: the float layer's, through the input's STE")
    assert_close(grads["kernel"], want["kernel"] * ste_mask(kernel), "dkernel through the kernel's STE")
    assert_close(grads["bias"], want["bias"], "dbias")


@pytest.mark.parametrize("padding, pad_values, strides", [("same", 1.0, (1, 1)), ("same", 0.0, (1, 1)),
                                                          ("same", 1.0, (2, 2)), ("valid", 1.0, (1, 1))])
def test_quant_conv2d_pads_the_quantized_input_with_pad_values(backend, padding, pad_values, strides):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    kernel = rng.standard_normal((3, 3, 3, 5)).astype(np.float32) * 0.8
    bias = rng.standard_normal(5).astype(np.float32)
    layer = lq.layers.QuantConv2D(5, 3, strides=strides, padding=padding, pad_values=pad_values,
                                  input_quantizer="ste_sign", kernel_quantizer="ste_sign")
    out_shape = (2,) + layer.compute_output_shape((7, 6, 3))
    dout = rng.standard_normal(out_shape).astype(np.float32)
    y, dx, grads = run(layer, backend, x, [kernel, bias], dout)
    # larq: tf.pad(quantized input, constant_values=pad_values), then a 'valid' convolution
    if padding == "same":
        rows = (1, 1)                                   # 7 rows: 2 pad rows either way
        cols = (0, 1) if strides == (2, 2) else (1, 1)  # TensorFlow's: the odd pixel after
        xq = np.pad(larq_sign(x), ((0, 0), rows, cols, (0, 0)), constant_values=pad_values)
    else:
        rows, cols, xq = (0, 0), (0, 0), larq_sign(x)
    want_y, want_dxq, want = reference(Conv2D(5, 3, strides=strides), xq, [larq_sign(kernel), bias], dout)
    want_dx = want_dxq[:, rows[0]:rows[0] + 7, cols[0]:cols[0] + 6, :] * ste_mask(x)
    assert_close(y, want_y, "output")
    assert_close(dx, want_dx, "dx")
    assert_close(grads["kernel"], want["kernel"] * ste_mask(kernel), "dkernel")


def test_quant_depthwise_and_separable(backend):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 6, 6, 4)).astype(np.float32)
    depthwise = rng.standard_normal((3, 3, 4, 2)).astype(np.float32)
    pointwise = rng.standard_normal((1, 1, 8, 5)).astype(np.float32) * 0.1
    bias = rng.standard_normal(5).astype(np.float32)
    xq = np.pad(larq_sign(x), ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=1.0)

    layer = lq.layers.QuantDepthwiseConv2D(3, padding="same", pad_values=1.0, depth_multiplier=2,
                                           input_quantizer="ste_sign", depthwise_quantizer="ste_sign",
                                           use_bias=False)
    dout = rng.standard_normal((2, 6, 6, 8)).astype(np.float32)
    y, dx, grads = run(layer, backend, x, [depthwise], dout)
    want_y, want_dxq, want = reference(DepthwiseConv2D(3, depth_multiplier=2, use_bias=False), xq,
                                       [larq_sign(depthwise)], dout)
    assert_close(y, want_y, "depthwise output")
    assert_close(dx, want_dxq[:, 1:7, 1:7] * ste_mask(x), "depthwise dx")
    assert_close(grads["kernel"], want["kernel"] * ste_mask(depthwise), "ddepthwise")

    tern = lq.quantizers.SteTern(ternary_weight_networks=True)
    layer = lq.layers.QuantSeparableConv2D(5, 3, padding="same", pad_values=1.0, depth_multiplier=2,
                                           input_quantizer="ste_sign", depthwise_quantizer="ste_sign",
                                           pointwise_quantizer=tern)
    dout = rng.standard_normal((2, 6, 6, 5)).astype(np.float32)
    y, dx, grads = run(layer, backend, x, [depthwise, pointwise, bias], dout)
    threshold = 0.7 * np.abs(pointwise).mean()
    ternary = np.sign(np.sign(pointwise + threshold) + np.sign(pointwise - threshold)).astype(np.float32)
    want_y, want_dxq, want = reference(SeparableConv2D(5, 3, depth_multiplier=2), xq,
                                       [larq_sign(depthwise), ternary, bias], dout)
    assert_close(y, want_y, "separable output")
    assert_close(dx, want_dxq[:, 1:7, 1:7] * ste_mask(x), "separable dx")
    assert_close(grads["depthwise_kernel"], want["depthwise_kernel"] * ste_mask(depthwise), "ddepthwise")
    assert_close(grads["pointwise_kernel"], want["pointwise_kernel"] * ste_mask(pointwise), "dpointwise")


def binary_mlp():
    kw = dict(input_quantizer="ste_sign", kernel_quantizer="ste_sign", kernel_constraint="weight_clip")
    return minidl.Sequential([
        minidl.layers.Input((8, 8, 1)),
        lq.layers.QuantConv2D(8, 3, padding="same", kernel_quantizer="ste_sign",
                              kernel_constraint="weight_clip", use_bias=False),
        minidl.layers.BatchNormalization(momentum=0.9, scale=False),
        lq.layers.QuantConv2D(8, 3, padding="same", pad_values=1.0, use_bias=False, **kw),
        minidl.layers.MaxPooling2D(2), minidl.layers.BatchNormalization(momentum=0.9, scale=False),
        minidl.layers.Flatten(), lq.layers.QuantDense(2, use_bias=False, **kw),
        minidl.layers.BatchNormalization(momentum=0.9, scale=False), minidl.layers.Activation("softmax")])


def test_a_binary_network_trains_with_clipped_latent_weights(active_backend):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 8, 8, 1)).astype(np.float32)
    y = (x[:, :4].mean(axis=(1, 2, 3)) > x[:, 4:].mean(axis=(1, 2, 3))).astype(np.int32)
    model = binary_mlp()
    model.compile(minidl.optimizers.Adam(0.01), "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=8, batch_size=32, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.75
    for layer in model.layers:
        if isinstance(layer, (lq.layers.QuantConv2D, lq.layers.QuantDense)):
            assert np.abs(layer.get_weights()[0]).max() <= 1.0, "WeightClip keeps latent weights in [-1, 1]"


def test_config_round_trip_and_saving(tmp_path):
    minidl.set_backend("numpy")
    model = binary_mlp()
    layer = model.layers[2]
    config = layer.get_config()
    assert config["pad_values"] == 1.0
    assert config["input_quantizer"] == {"class_name": "SteSign",
                                         "config": {"name": config["input_quantizer"]["config"]["name"],
                                                    "trainable": True, "metrics": None, "clip_value": 1.0}}
    again = lq.layers.QuantConv2D.from_config(config)
    assert type(again.kernel_quantizer) is lq.quantizers.SteSign and again.pad_values == 1.0
    x = np.random.default_rng(0).standard_normal((4, 8, 8, 1)).astype(np.float32)
    path = os.path.join(tmp_path, "binary.keras")
    model.save(path)
    loaded = minidl.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_larq_defaults_and_errors():
    layer = lq.layers.QuantConv2D(4, 3)
    assert layer.pad_values == 0.0 and layer.input_quantizer is None and layer.kernel_quantizer is None
    assert isinstance(lq.layers.QuantDense(3, kernel_constraint="weight_clip").kernel_constraint,
                      lq.constraints.WeightClip)
    with pytest.raises(ValueError, match="flip_ratio"):
        lq.layers.QuantDense(3, metrics=["flip_ratio"])
    with pytest.raises(TypeError, match="pad_values"):
        lq.layers.QuantConv2D(4, 3, pad_values="one")
    clip = lq.constraints.WeightClip(0.5)
    np.testing.assert_array_equal(clip(np.array([-2, 0.25, 3], np.float32)), [-0.5, 0.25, 0.5])


def test_models_summary_counts_as_larq():
    minidl.set_backend("numpy")
    model = binary_mlp()
    printed = io.StringIO()
    lq.models.summary(model, print_fn=lambda s: printed.write(s + "\n"))
    text = printed.getvalue()
    # conv 1: 72 1-bit weights, input 32-bit -> 72 * 64 = 4608 32-bit MACs; conv 2: 576 1-bit
    # weights on 1-bit input -> 36864 binarized MACs; dense: 128 * 2 = 256 1-bit weights and MACs
    assert f"{model.name} stats" in text and f"{model.name} summary" in text
    ones = 72 + 576 + 256
    assert f"{ones}" in text.split("Total")[1].split("\n")[0]
    assert "Ratio of MACs that are binarized" in text
    binarized = (36864 + 256) / (4608 + 36864 + 256)
    assert f"{binarized:.4f}" in text


def test_convert_predicts_on_the_binary_ops_as_the_float_path(active_backend):
    """lq.convert: the binary layers' predictions equal the float path's (integer sums are exact
    in float32 here), the kernel is packed once and again after a training step."""
    rng = np.random.default_rng(3)
    model = binary_mlp()
    model.compile("adam", "sparse_categorical_crossentropy")
    x = rng.standard_normal((16, 8, 8, 1)).astype(np.float32)
    y = rng.integers(0, 2, 16)
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    want = model.predict(x, verbose=0)
    lq.convert(model)
    assert model.binary_layers == [model.layers[2].name, model.layers[6].name]   # not the float-input conv
    np.testing.assert_array_equal(model.predict(x, verbose=0), want)
    packed = model.layers[2]._binary_state.kernel_bits
    assert packed is not None
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)           # the latent weights move
    assert model.layers[2]._binary_state.kernel_bits is None
    after = model.predict(x, verbose=0)
    for name in model.binary_layers:                              # back to the float path
        model.get_layer(name)._binary_state = None
    np.testing.assert_array_equal(after, model.predict(x, verbose=0))


def test_binarynet_trains_and_converts():
    from minidl import zoo
    minidl.set_backend("cpu")
    try:
        model = zoo.binarynet()
        assert model.count_params() == zoo.binarynet(binary=False).count_params()
        model.compile("adam", "sparse_categorical_crossentropy")
        rng = np.random.default_rng(0)
        x = rng.standard_normal((8, 32, 32, 3)).astype(np.float32)
        model.fit(x, rng.integers(0, 10, 8), epochs=1, batch_size=8, verbose=0)
        want = model.predict(x, verbose=0)
        lq.convert(model)
        assert len(model.binary_layers) == 8
        np.testing.assert_allclose(model.predict(x, verbose=0), want, rtol=1e-5, atol=1e-6)
    finally:
        minidl.set_backend("numpy")


def test_hyperparameter_scheduler_sets_and_logs():
    minidl.set_backend("numpy")
    model = binary_mlp()
    model.compile(minidl.optimizers.Adam(0.01), "sparse_categorical_crossentropy")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 8, 8, 1)).astype(np.float32), rng.integers(0, 2, 8)
    scheduler = lq.callbacks.HyperparameterScheduler(lambda epoch: 0.1 * 0.5 ** epoch, "beta_1")
    history = model.fit(x, y, epochs=3, batch_size=8, verbose=0, callbacks=[scheduler])
    assert history.history["beta_1"] == [0.1, 0.05, 0.025]
    with pytest.raises(ValueError, match="update_freq"):
        lq.callbacks.HyperparameterScheduler(lambda e: 1.0, "beta_1", update_freq="batch")
    with pytest.raises(ValueError, match="attribute"):
        model.fit(x, y, epochs=1, verbose=0,
                  callbacks=[lq.callbacks.HyperparameterScheduler(lambda e: 1.0, "gamma")])
