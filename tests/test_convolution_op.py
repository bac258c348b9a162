"""Conv2D / Conv3D / Conv1D.convolution_op(inputs, kernel), as Keras 3's BaseConv: a subclass
overriding it (keras-io's standardized-weight convolution) computes through the override,
its gradients flowing through what the override does to the kernel, eagerly and in a trained
model; Conv1D's call, as Keras's, ignores an override; ops.conv of every rank. On every
backend, against tests/fixtures/keras_convolution_op.json, which real Keras 3.15.1 (torch
backend) wrote (tests/fixtures/keras_convolution_op.py)."""

import json
import os

import numpy as np
import pytest

import minidl
from minidl import layers, ops

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "keras_convolution_op.json")) as f:
    KERAS = json.load(f)


class Std2D(layers.Conv2D):
    def convolution_op(self, inputs, kernel):
        mean = ops.mean(kernel, axis=[0, 1, 2], keepdims=True)
        var = ops.var(kernel, axis=[0, 1, 2], keepdims=True)
        return ops.conv(inputs, (kernel - mean) / ops.sqrt(var + 1e-10), padding="valid",
                        strides=list(self.strides))


class Std3D(layers.Conv3D):
    def convolution_op(self, inputs, kernel):
        mean = ops.mean(kernel, axis=[0, 1, 2, 3], keepdims=True)
        var = ops.var(kernel, axis=[0, 1, 2, 3], keepdims=True)
        return super().convolution_op(inputs, (kernel - mean) / ops.sqrt(var + 1e-10))


class Zero1D(layers.Conv1D):
    def convolution_op(self, inputs, kernel):
        return super().convolution_op(inputs, kernel * 0)


def fixed(shape, scale=1.0):
    """The inputs and weights the Keras script used."""
    return (np.cos(np.arange(np.prod(shape), dtype="float32") * 0.7) * scale).reshape(shape).astype("float32")


def _std2d():
    layer = Std2D(3, (2, 2), activation="relu")
    layer(fixed((2, 5, 5, 2)))
    layer.set_weights([fixed((2, 2, 2, 3), 0.3), np.array([0.1, -0.2, 0.05], "float32")])
    return layer


def test_an_overridden_convolution_op_computes_the_output(active_backend):
    np.testing.assert_allclose(_std2d()(fixed((2, 5, 5, 2))), KERAS["std2d_y"], rtol=1e-4, atol=2e-5)


def test_gradients_flow_through_the_override(active_backend):
    layer = _std2d()
    x = ops.convert_to_tensor(fixed((2, 5, 5, 2)))
    x.requires_grad = True
    with minidl.GradientTape() as tape:
        loss = ops.sum(layer(x) * fixed((2, 4, 4, 3), 0.5))
    dkernel, dbias, dx = tape.gradient(loss, [layer.kernel, layer.bias, x])
    np.testing.assert_allclose(ops.convert_to_numpy(dkernel), KERAS["std2d_dkernel"], rtol=1e-3, atol=2e-4)
    np.testing.assert_allclose(ops.convert_to_numpy(dbias), KERAS["std2d_dbias"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ops.convert_to_numpy(dx), KERAS["std2d_dx"], rtol=1e-4, atol=1e-5)


def test_a_model_trains_through_the_override(active_backend):
    conv = Std2D(3, (2, 2), activation="relu")
    dense = layers.Dense(1)
    model = minidl.Sequential([layers.Input((5, 5, 2)), conv, layers.Flatten(), dense])
    conv.set_weights([fixed((2, 2, 2, 3), 0.3), np.array([0.1, -0.2, 0.05], "float32")])
    dense.set_weights([fixed((48, 1), 0.1), np.zeros((1,), "float32")])
    model.compile(minidl.optimizers.SGD(0.1), "mse")
    model.fit(fixed((2, 5, 5, 2)), np.array([[1.0], [-1.0]], "float32"), batch_size=2, epochs=1,
              verbose=0, shuffle=False)
    kernel, bias = conv.get_weights()
    np.testing.assert_allclose(kernel, KERAS["fit_kernel"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bias, KERAS["fit_bias"], rtol=1e-4, atol=1e-5)


def test_conv3d_override_and_its_kernel_gradient(active_backend):
    layer = Std3D(2, (2, 3, 1), padding="same", strides=(1, 2, 1))
    x = fixed((1, 4, 4, 3, 2))
    layer(x)
    layer.set_weights([fixed((2, 3, 1, 2, 2), 0.4), np.array([0.3, -0.1], "float32")])
    np.testing.assert_allclose(layer(x), KERAS["std3d_y"], rtol=1e-4, atol=2e-5)
    with minidl.GradientTape() as tape:
        y = layer(ops.convert_to_tensor(x))
        loss = ops.sum(y * fixed(tuple(y.shape), 0.5))
    np.testing.assert_allclose(ops.convert_to_numpy(tape.gradient(loss, layer.kernel)),
                               KERAS["std3d_dkernel"], rtol=1e-3, atol=2e-4)


def test_conv1d_call_ignores_the_override_as_keras(active_backend):
    layer = Zero1D(2, 3)
    x = fixed((2, 6, 2))
    layer(x)
    layer.set_weights([fixed((3, 2, 2), 0.5), np.zeros((2,), "float32")])
    np.testing.assert_allclose(layer(x), KERAS["zero1d_y"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ops.convert_to_numpy(layer.convolution_op(x, layer.kernel)),
                               KERAS["op1d"], atol=1e-7)   # called by hand: the override


def test_convolution_op_called_by_hand(active_backend):
    layer = _std2d()
    plain = layers.Conv2D.convolution_op(layer, fixed((2, 5, 5, 2)), layer.kernel)
    assert abs(float(ops.convert_to_numpy(ops.sum(plain))) - KERAS["op2d"]) < 1e-4


def test_the_default_path_keeps_the_fused_kernels(active_backend):
    # no override: the built-in forward runs (not a layer written with call)
    for layer in (layers.Conv1D(2, 3), layers.Conv2D(2, 3), layers.Conv3D(2, 3)):
        assert not layer.uses_call()
        assert callable(layer.convolution_op)
    assert Std2D(2, 3).uses_call() and Std3D(2, 3).uses_call() and not Zero1D(2, 3).uses_call()


def test_transposed_convolutions_have_no_convolution_op():
    with pytest.raises(AttributeError, match="convolution_op"):
        layers.Conv2DTranspose(2, 3).convolution_op


def test_ops_conv_errors():
    with pytest.raises(ValueError, match="padding must be 'valid' or 'same'"):
        ops.conv(np.ones((1, 5, 2), "float32"), np.ones((3, 2, 1), "float32"), padding="causal")
    with pytest.raises(ValueError, match="does not fit"):
        ops.conv(np.ones((1, 2, 4, 4, 1), "float32"), np.ones((3, 1, 1, 1, 1), "float32"))
