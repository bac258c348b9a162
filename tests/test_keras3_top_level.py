"""Keras 3's top-level classes on minidl: Variable (and every layer weight as one),
InputSpec, Operation, Function, device, name_scope, version and the base classes. The
messages and values are those Keras 3.15.1 gave for the same calls."""

import numpy as np
import pytest

import minidl
from minidl import layers


def test_the_base_classes_are_minidl_s():
    assert minidl.Layer is layers.Layer
    assert minidl.Loss is minidl.losses.Loss and minidl.Metric is minidl.metrics.Metric
    assert minidl.Optimizer is minidl.optimizers.Optimizer
    assert minidl.Initializer is minidl.initializers.Initializer
    assert minidl.Regularizer is minidl.regularizers.Regularizer
    assert minidl.KerasTensor is type(minidl.Input((2,)))
    assert isinstance(minidl.FloatDTypePolicy("mixed_float16"), minidl.DTypePolicy)
    assert minidl.version() == minidl.__version__


def test_variable_assign_methods(active_backend):
    v = minidl.Variable(np.ones((2, 3)), name="w")
    assert (v.name, v.path, v.dtype, v.shape, v.trainable) == ("w", "w", "float32", (2, 3), True)
    assert v.constraint is None and v.regularizer is None
    assert v.assign(np.zeros((2, 3))) is v
    v.assign_add(np.ones((2, 3)))
    assert v.numpy().sum() == 6.0
    v.assign_sub(2 * np.ones((2, 3)))
    np.testing.assert_array_equal(v.numpy(), -np.ones((2, 3)))
    v.assign_add(1.0)    # a scalar broadcasts, as in Keras
    np.testing.assert_array_equal(np.asarray(v), np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"variable.shape=\(2, 3\), Received: value.shape=\(3, 2\)"):
        v.assign(np.ones((3, 2)))
    with pytest.raises(ValueError):
        v.assign_add(np.ones(4))


def test_variable_from_an_initializer_needs_a_shape(active_backend):
    w = minidl.Variable("ones", shape=(2,), trainable=False)
    np.testing.assert_array_equal(w.numpy(), [1.0, 1.0])
    assert not w.trainable and w.name.startswith("variable")
    with pytest.raises(ValueError, match="the `shape` argument should be specified"):
        minidl.Variable("zeros")
    with pytest.raises(TypeError, match="float32"):
        minidl.Variable(np.ones(2), dtype="int32")


def test_layer_weights_are_variables_with_keras_paths(active_backend):
    model = minidl.Sequential([layers.Input((2,)), layers.Dense(3, name="dense")])
    kernel = model.layers[0].kernel
    assert isinstance(kernel, minidl.Variable) and kernel.path == "dense/kernel"
    kernel.assign(np.ones((2, 3)))
    model.layers[0].bias.assign_add(np.full(3, 0.5))
    np.testing.assert_allclose(model.predict(np.ones((1, 2)), verbose=0), [[2.5, 2.5, 2.5]])


def test_assign_before_the_model_is_built_becomes_the_initial_value(active_backend):
    dense = layers.Dense(2)
    inputs = minidl.Input((2,))
    model = minidl.Model(inputs, dense(inputs))
    dense.kernel.assign(np.eye(2))
    dense.kernel.assign_sub(np.eye(2) * 0.5)
    x = np.array([[1.0, 2.0]], dtype=np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0), 0.5 * x)


def test_name_scope_prefixes_variable_paths():
    with minidl.name_scope("outer"):
        with minidl.name_scope("inner"):
            assert minidl.Variable(1.0, name="s").path == "outer/inner/s"
        assert minidl.Variable(1.0, name="t").path == "outer/t"
    assert minidl.Variable(1.0, name="u").path == "u"


class _Identity(layers.Layer):
    def __init__(self, spec, **kwargs):
        super().__init__(**kwargs)
        self.input_spec = spec

    def call(self, x):
        return x


@pytest.mark.parametrize("spec, shape, message", [
    (minidl.InputSpec(ndim=4), (3,), "expected ndim=4, found ndim=2. Full shape received: (None, 3)"),
    (minidl.InputSpec(min_ndim=3), (3,), "expected min_ndim=3, found ndim=2"),
    (minidl.InputSpec(max_ndim=2), (3, 4), "expected max_ndim=2, found ndim=3"),
    (minidl.InputSpec(axes={-1: 3}), (4,), "expected axis -1 of input shape to have value 3, "
                                          "but received input with shape (None, 4)"),
    (minidl.InputSpec(shape=(None, 5)), (4,), "expected shape=(None, 5), found shape=(None, 4)"),
    (minidl.InputSpec(dtype="int32"), (4,), "expected dtype=int32, found dtype=float32"),
])
def test_input_spec_is_checked_as_keras_checks_it(spec, shape, message):
    with pytest.raises(ValueError) as info:
        _Identity(spec, name="lay")(minidl.Input(shape))
    assert "of layer 'lay' is incompatible with the layer" in str(info.value)
    assert message in str(info.value)


def test_input_spec_accepts_fitting_inputs_and_round_trips():
    assert _Identity(minidl.InputSpec(ndim=2, axes={1: 4}))(minidl.Input((4,))).shape == (None, 4)
    assert _Identity([minidl.InputSpec(ndim=2)])(minidl.Input((4,))).shape == (None, 4)
    spec = minidl.InputSpec(shape=(None, 5))
    assert spec.get_config() == {"dtype": None, "shape": (None, 5), "ndim": 2, "max_ndim": None,
                                 "min_ndim": None, "axes": {}, "optional": False}
    assert minidl.InputSpec.from_config({"ndim": 2}).ndim == 2
    assert repr(minidl.InputSpec(ndim=2, axes={1: 3})) == "InputSpec(ndim=2, axes={1: 3})"
    with pytest.raises(ValueError, match="Axis 3 is greater than the maximum allowed value: 1"):
        minidl.InputSpec(ndim=2, axes={3: 1})


class _Double(minidl.Operation):
    def call(self, x):
        return minidl.ops.multiply(x, 2.0)


def test_operation_runs_eagerly_and_in_a_model(active_backend):
    op = _Double()
    np.testing.assert_allclose(minidl.ops.convert_to_numpy(op(np.ones(3, dtype=np.float32))), 2.0)
    inputs = minidl.Input((3,))
    model = minidl.Model(inputs, op(inputs))
    np.testing.assert_allclose(model.predict(np.ones((2, 3)), verbose=0), 2.0)


def test_function_computes_from_inputs_to_outputs(active_backend):
    inputs = minidl.Input((3,))
    fn = minidl.Function(inputs, layers.ReLU()(inputs))
    out = fn(np.array([[-1.0, 0.0, 2.0]], dtype=np.float32))
    np.testing.assert_allclose(minidl.ops.convert_to_numpy(out), [[0.0, 0.0, 2.0]])


def test_device_chooses_the_backend_inside_the_block():
    before = minidl.get_backend()
    with minidl.device("numpy"):
        assert minidl.get_backend().name == "numpy"
        model = minidl.Sequential([layers.Input((2,)), layers.Dense(1)])
        model.predict(np.ones((1, 2)), verbose=0)
    assert minidl.get_backend() is before
    with minidl.device("cpu:0"):
        assert minidl.get_backend().name == "cpu"
    with pytest.raises(ValueError, match="unknown device 'tpu:0'"):
        with minidl.device("tpu:0"):
            pass


class _Scaled(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.scale = minidl.Variable(np.ones(3), name="scale")
        self.frozen = minidl.Variable(np.full(3, 2.0), name="frozen", trainable=False)

    def call(self, x):
        return x * self.scale * self.frozen


def test_a_variable_held_by_a_layer_is_one_of_its_weights(active_backend):
    layer = _Scaled(name="scaled")
    assert [w.path for w in layer.weights] == ["scaled/scale", "scaled/frozen"]
    inputs = minidl.Input((3,))
    model = minidl.Model(inputs, layer(inputs))
    model.compile("sgd", "mse")
    x = np.ones((8, 3), np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0), 2.0)
    model.fit(x, np.zeros((8, 3)), epochs=2, verbose=0)
    assert np.all(layer.scale.numpy() < 1.0)                  # trained
    np.testing.assert_array_equal(layer.frozen.numpy(), 2.0)  # not trainable
    assert len(model.trainable_weights) == 1 and len(model.non_trainable_weights) == 1
