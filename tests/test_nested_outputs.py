"""A functional model whose outputs nest (keras-io's involution example: [layer.output for
...] of layers that return two tensors): the nestings predict, __call__ and a call on
symbolic tensors return, model.outputs / output_names / output_shape, fit and evaluate with
targets and losses nested as the outputs, saving and cloning, and the errors for a bad
nesting. Expected values were printed by Keras 3.15.1 (torch backend) running the same code."""

import numpy as np
import pytest

import minidl as keras
from minidl import layers


class Two(layers.Layer):
    """Two outputs from one call, as the involution layer's (output, kernel)."""

    def __init__(self, autocast=True, **kwargs):   # autocast: as a Keras-written config has it
        super().__init__(**kwargs)

    def call(self, x):
        return x * 2, x + 1


X = np.array([[0.1, -0.2, 0.3], [0.5, 0.4, -0.1], [-0.3, 0.2, 0.2], [0.0, 0.1, -0.4]], "float32")
YA = np.array([[0.2, 0.1, 0.0]] * 4, "float32")
YB = np.array([[1.0, 0.9, 1.1]] * 4, "float32")
YD = np.array([[0.5, -0.5]] * 4, "float32")
K_H = np.array([[0.2, -0.1, 0.3], [0.1, 0.4, -0.2], [-0.3, 0.2, 0.1]], "float32")
K_D = np.array([[0.3, -0.2], [0.1, 0.2], [-0.4, 0.5]], "float32")


def _graph():
    """(input, a, b, d): Dense h -> Two -> (a, b); d = Dense(a)."""
    inp = keras.Input((3,))
    a, b = Two(name="two")(layers.Dense(3, name="h")(inp))
    return inp, a, b, layers.Dense(2, name="d")(a)


def _model(inputs, outputs, **kwargs):
    """keras.Model(inputs, outputs) with h's and d's kernels fixed (biases zero)."""
    model = keras.Model(inputs, outputs, **kwargs)
    for layer in model.layers:
        if layer.name in ("h", "d"):
            kernel = K_H if layer.name == "h" else K_D
            layer.set_weights([kernel, np.zeros(kernel.shape[1], "float32")])
    return model


def _outputs(case, a, b, d):
    return {"[two.output]": [[a, b]], "two.output": [a, b], "[two.output, d]": [[a, b], d],
            "tuple of lists": ([a, b], [d]), "dict nested": {"z": [a, b], "a": d},
            "list with dict": [{"b": d}, b], "[[d]]": [[d]]}[case]


def _shapes(value):
    """The nesting with arrays as their shapes and dicts as (key, value) lists, in order."""
    if isinstance(value, dict):
        return {"dict": [(k, _shapes(v)) for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return type(value)(_shapes(v) for v in value)
    return tuple(value.shape)


# Keras 3.15.1's: predict (and __call__ on arrays) unwraps a list of one; a call on
# symbolic tensors keeps the nesting; dicts of results come by sorted key
KERAS = {
    "[two.output]": ([(2, 3), (2, 3)], [[(None, 3), (None, 3)]],
                     ["two", "two"], [(None, 3), (None, 3)]),
    "two.output": ([(2, 3), (2, 3)], [(None, 3), (None, 3)],
                   ["two", "two"], [(None, 3), (None, 3)]),
    "[two.output, d]": ([[(2, 3), (2, 3)], (2, 2)], [[(None, 3), (None, 3)], (None, 2)],
                        ["two", "two", "d"], [(None, 3), (None, 3), (None, 2)]),
    "tuple of lists": (([(2, 3), (2, 3)], [(2, 2)]), ([(None, 3), (None, 3)], [(None, 2)]),
                       ["two", "two", "d"], [(None, 3), (None, 3), (None, 2)]),
    "dict nested": ({"dict": [("a", (2, 2)), ("z", [(2, 3), (2, 3)])]},
                    {"dict": [("z", [(None, 3), (None, 3)]), ("a", (None, 2))]},
                    ["d", "two", "two"], [(None, 2), (None, 3), (None, 3)]),
    "list with dict": ([{"dict": [("b", (2, 2))]}, (2, 3)],
                       [{"dict": [("b", (None, 2))]}, (None, 3)],
                       ["d", "two"], [(None, 2), (None, 3)]),
    "[[d]]": ([(2, 2)], [[(None, 2)]], ["d"], (None, 2)),
}


@pytest.mark.parametrize("case", sorted(KERAS))
def test_predict_and_call_return_the_nesting_keras_returns(active_backend, case):
    inp, a, b, d = _graph()
    model = _model(inp, _outputs(case, a, b, d))
    predicted, symbolic, names, shape = KERAS[case]
    assert _shapes(model.predict(X[:2], verbose=0)) == predicted
    assert _shapes(model(X[:2])) == predicted
    assert _shapes(model(keras.Input((3,)))) == symbolic
    assert model.output_names == names
    assert model.output_shape == shape
    assert [t.shape for t in model.outputs] == [tuple(s) for s in (
        shape if isinstance(shape, list) else [shape])]
    assert model.output is not None and _shapes(model.output) == symbolic


def test_the_values_are_the_layers_outputs(active_backend):
    inp, a, b, d = _graph()
    model = _model(inp, {"p": [a, b], "q": (d,)})
    out = model.predict(X, verbose=0)
    hidden = X @ K_H
    np.testing.assert_allclose(out["p"][0], hidden * 2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["p"][1], hidden + 1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["q"][0], (hidden * 2) @ K_D, rtol=1e-5, atol=1e-6)


# Keras 3.15.1, SGD(0.1), batch_size=4, 2 epochs, no shuffle: history["loss"], then the
# kernels of h and d after training
KERAS_FIT = {
    "list": ([0.31354784965515137, 0.19356270134449005],
             [[0.19154410064220428, -0.09977658838033676, 0.2787742614746094],
              [0.09839773178100586, 0.3889918923377991, -0.20497459173202515],
              [-0.27678996324539185, 0.19456109404563904, 0.08819783478975296]],
             [[0.30556225776672363, -0.2068316638469696], [0.10451919585466385, 0.19399461150169373],
              [-0.4034934639930725, 0.5037533044815063]], 0.1604657918214798),
    "dict": ([0.5510414838790894, 0.1827385127544403],
             [[0.19635151326656342, -0.10040519386529922, 0.2737377882003784],
              [0.10145294666290283, 0.389806866645813, -0.2096807211637497],
              [-0.27441272139549255, 0.19429251551628113, 0.08106439560651779]],
             [[0.30881571769714355, -0.21073076128959656], [0.10714147984981537, 0.19003687798976898],
              [-0.40830352902412415, 0.5082415342330933]], 0.15447717905044556),
}


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_fit_with_targets_and_losses_nested_as_the_outputs(active_backend, kind):
    inp, a, b, d = _graph()
    if kind == "list":
        model = _model(inp, [[a, b], d])
        loss, y, weights = [["mse", "mse"], "mse"], [[YA, YB], YD], None
    else:
        model = _model(inp, {"p": [a, b], "q": d})
        loss, y = {"p": ["mse", "mse"], "q": "mse"}, {"p": [YA, YB], "q": YD}
        weights = {"p": [1.0, 0.5], "q": 2.0}
    model.compile(keras.optimizers.SGD(0.1), loss, loss_weights=weights)
    history = model.fit(X, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    losses, h_kernel, d_kernel, evaluated = KERAS_FIT[kind]
    np.testing.assert_allclose(history.history["loss"], losses, rtol=1e-4)
    np.testing.assert_allclose(model.get_weights()[0], h_kernel, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(model.get_weights()[2], d_kernel, rtol=1e-4, atol=1e-6)
    assert model.evaluate(X, y, verbose=0)[0] == pytest.approx(evaluated, rel=1e-4)


def test_a_flat_list_or_one_loss_serves_nested_outputs_too(active_backend):
    inp, a, b, d = _graph()
    model = _model(inp, [[a, b], d])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    first = model.fit(X, [YA, YB, YD], batch_size=4, epochs=1, verbose=0).history["loss"][0]
    assert first == pytest.approx(KERAS_FIT["list"][0][0], rel=1e-4)


def test_flat_outputs_keep_working(active_backend):
    inp, a, b, d = _graph()
    flat = keras.Model(inp, [a, d])
    assert _shapes(flat.predict(X, verbose=0)) == [(4, 3), (4, 2)]
    one = keras.Model(inp, [d])
    assert _shapes(one.predict(X, verbose=0)) == (4, 2)
    by_name = keras.Model(inp, {"a": a, "d": d})
    by_name.compile("sgd", {"a": "mse", "d": "mse"})
    history = by_name.fit(X, {"a": YA, "d": YD}, epochs=1, verbose=0).history
    assert set(history) == {"loss", "a_loss", "d_loss"}


@pytest.mark.parametrize("outputs, message", [
    (lambda a, b, d: [[a, 3], d], r"outputs\[0\]\[1\] is int"),
    (lambda a, b, d: {"p": [a, "s"]}, r"outputs\['p'\]\[1\] is str"),
    (lambda a, b, d: [a, None], r"outputs\[1\] is NoneType"),
])
def test_a_leaf_that_is_not_a_tensor_is_refused(outputs, message):
    inp, a, b, d = _graph()
    with pytest.raises(ValueError, match=r"Model 'bad': outputs must be tensors .*" + message):
        keras.Model(inp, outputs(a, b, d), name="bad")


def test_targets_nested_otherwise_are_refused():
    inp, a, b, d = _graph()
    model = _model(inp, [[a, b], d], name="nest")
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match=r"Model 'nest'.*y must nest as the model's outputs"):
        model.fit(X, [[YA], [YB, YD]], verbose=0)


def test_nested_inputs_are_refused_with_the_model_named():
    inp, other = keras.Input((3,)), keras.Input((3,))
    with pytest.raises(ValueError, match=r"Model 'nin': inputs must be .* not nested"):
        keras.Model([[inp, other]], layers.Add()([inp, other]), name="nin")


def _same(a, b):
    assert _shapes(a) == _shapes(b) or keras.tree.lists_to_tuples(_shapes(a)) == \
        keras.tree.lists_to_tuples(_shapes(b))
    for x, y in zip(keras.tree.flatten(a), keras.tree.flatten(b)):
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_config_clone_and_files_keep_the_nesting(active_backend, tmp_path):
    inp, a, b, d = _graph()
    model = _model(inp, {"p": [a, b], "q": [d]})
    expected = model.predict(X, verbose=0)
    rebuilt = keras.Model.from_config(model.get_config(), custom_objects={"Two": Two})
    rebuilt.set_weights(model.get_weights())
    _same(rebuilt.predict(X, verbose=0), expected)
    assert _shapes(keras.models.clone_model(model).predict(X, verbose=0)) == _shapes(expected)
    for name in ("m.keras", "m.minidl"):
        model.save(tmp_path / name)
        loaded = keras.models.load_model(tmp_path / name, custom_objects={"Two": Two})
        _same(loaded.predict(X, verbose=0), expected)


def test_a_nested_model_used_as_a_layer(active_backend):
    inp, a, b, d = _graph()
    inner = _model(inp, [[a, b], d])
    outer_in = keras.Input((3,))
    (first, second), last = inner(outer_in)
    outer = keras.Model(outer_in, [second, last])
    out = outer.predict(X, verbose=0)
    np.testing.assert_allclose(out[0], X @ K_H + 1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1], (X @ K_H * 2) @ K_D, rtol=1e-5, atol=1e-6)
