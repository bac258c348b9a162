"""The functional API as Keras scripts use it: several inputs and outputs, shared layers and
models (siamese networks), models nested as layers, sub-models, merge helpers, eager calls,
freezing and fine-tuning, and saving every kind. Model tests run on every backend."""

import numpy as np
import pytest

import minidl
from minidl import layers, optimizers
from minidl.backends.numpy_backend import NumpyBackend
from minidl.models import Model, Sequential, load_model
from test_gradients import check_layer, numeric_grad
from test_keras_compat import active_backend  # noqa: F401  (the every-backend fixture)

@pytest.fixture
def float64_backend():
    minidl.set_backend(NumpyBackend(dtype="float64"))
    minidl.set_seed(1)
    yield
    minidl.set_backend("numpy")


def pairs(n=128, dim=6, seed=0):
    """Pairs of points; the target says whether both come from the same one of 2 blobs."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 2.5, size=(2, dim))
    ca, cb = rng.integers(0, 2, n), rng.integers(0, 2, n)
    a = centers[ca] + rng.normal(size=(n, dim)) * 0.5
    b = centers[cb] + rng.normal(size=(n, dim)) * 0.5
    return a.astype(np.float32), b.astype(np.float32), (ca == cb).astype(np.float32)[:, None]


def base_network(dim=6):
    inp = layers.Input((dim,))
    h = layers.Dense(8, activation="relu")(inp)
    return Model(inp, layers.Dense(4)(h), name="base")


def siamese(dim=6):
    base = base_network(dim)
    a, b = layers.Input((dim,), name="left"), layers.Input((dim,), name="right")
    ea, eb = base(a), base(b)
    d = layers.subtract([ea, eb])
    out = layers.Dense(1, activation="sigmoid", name="same")(layers.multiply([d, d]))
    return Model([a, b], out), base


def test_siamese_gradients_are_summed_over_both_calls(float64_backend):
    model, base = siamese()
    model.compile("sgd", "binary_crossentropy")
    a, b, y = pairs(n=6)
    xs, ys = model._validate_xy([a.astype(np.float64), b.astype(np.float64)], y)
    xs = [x.astype(np.float64) for x in xs]

    def loss():
        model.reset_metrics()
        model._test_step(xs, ys)
        return model._metric_values()["loss"]

    model._gradients(xs, ys)
    rng = np.random.default_rng(0)
    first = base.layers[1]   # after its InputLayer, as Keras 3 lists them
    assert len(model.weights) == 6 and first.kernel in model.weights  # one set of weights
    analytic = np.array(first.kernel.grad)
    idx, num = numeric_grad(loss, first.kernel.value, rng, count=10)
    np.testing.assert_allclose(analytic.reshape(-1)[idx], num, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("merge", ["subtract", "multiply", "average", "maximum", "minimum",
                                   "add", "concatenate"])
def test_merge_helpers_gradients(float64_backend, merge):
    rng = np.random.default_rng(2)
    a, b = layers.Input((5,)), layers.Input((5,))
    ha = layers.Dense(5, activation="tanh")(a)
    hb = layers.Dense(5, activation="tanh")(b)
    merged = getattr(layers, merge)([ha, hb, ha] if merge not in ("subtract",) else [ha, hb])
    model = Model([a, b], layers.Dense(1)(merged))
    model.compile("sgd", "mse")
    xs = [rng.normal(size=(4, 5)), rng.normal(size=(4, 5))]
    ys = [rng.normal(size=(4, 1))]

    def loss():
        model.reset_metrics()
        model._test_step(xs, ys)
        return model._metric_values()["loss"]

    model._gradients(xs, ys)
    for dense in model.layers[2:4]:   # after the two InputLayers
        analytic = np.array(dense.kernel.grad)
        idx, num = numeric_grad(loss, dense.kernel.value, rng, count=10)
        np.testing.assert_allclose(analytic.reshape(-1)[idx], num, rtol=1e-5, atol=1e-8)


def test_merge_values(active_backend):
    x, y = np.array([[1.0, -2.0, 3.0]], np.float32), np.array([[2.0, -3.0, 1.0]], np.float32)
    a, b = layers.Input((3,)), layers.Input((3,))
    for helper, expected in [("subtract", x - y), ("multiply", x * y), ("average", (x + y) / 2),
                             ("maximum", np.maximum(x, y)), ("minimum", np.minimum(x, y))]:
        model = Model([a, b], getattr(layers, helper)([a, b]))
        np.testing.assert_allclose(model.predict([x, y]), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="exactly 2 inputs"):
        layers.Subtract()([a, b, a])


def test_siamese_trains_saves_and_loads_on_every_backend(active_backend, tmp_path):
    model, base = siamese()
    model.compile(optimizers.Adam(0.02), "binary_crossentropy", metrics=["accuracy"])
    a, b, y = pairs()
    history = model.fit([a, b], y, batch_size=16, epochs=25, verbose=0)
    assert history.history["accuracy"][-1] > 0.9
    assert [type(l).__name__ for l in model.layers] == ["InputLayer", "InputLayer", "Model",
                                                        "Subtract", "Multiply", "Dense"]
    assert model.layers[2] is base
    assert model.count_params() == base.count_params() + 5
    lines = []
    model.summary(print_fn=lines.append)   # Keras 3.15's rows, counts and connections
    assert any("base (Functional)" in l and " 92 " in l and "left[0][0], right[0][0]" in l
               for l in lines)
    assert any("base[0][0], base[1][0]" in l for l in lines)
    assert "Total params: 97" in lines
    path = tmp_path / "siamese.minidl"
    model.save(path)
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict([a, b]), model.predict([a, b]))
    # the base network alone still works, with the trained (shared) weights
    np.testing.assert_allclose(base.predict(a), loaded.get_layer("base").predict(a), rtol=1e-6)
    inputs = {"left": a, "right": b}
    np.testing.assert_array_equal(model.predict(inputs), model.predict([a, b]))


def test_shared_layer_step_matches_numpy_reference(active_backend):
    a, b, y = pairs(n=16)

    def build():
        minidl.set_seed(3)
        model, _ = siamese()
        model.compile("sgd", "binary_crossentropy")
        return model

    model = build()
    weights = model.get_weights()
    model.train_on_batch([a, b], y)
    minidl.set_backend("numpy")
    reference = build()
    reference.set_weights(weights)
    reference.train_on_batch([a, b], y)
    for got, want in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-6)


def two_in_two_out():
    img = layers.Input((6,), name="features")
    meta = layers.Input((3,), name="meta")
    h = layers.concatenate([layers.Dense(8, activation="relu")(img), meta])
    cls = layers.Dense(3, activation="softmax", name="cls")(h)
    reg = layers.Dense(1, name="reg")(h)
    return Model(inputs=[img, meta], outputs=[cls, reg])


def two_output_data(n=96, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)).astype(np.float32)
    m = rng.normal(size=(n, 3)).astype(np.float32)
    y_cls = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5)
    y_reg = (x[:, 2:3] + m[:, :1]).astype(np.float32)
    return x, m, y_cls, y_reg


def test_two_inputs_two_outputs_with_loss_weights(active_backend, tmp_path):
    model = two_in_two_out()
    model.compile(optimizers.Adam(0.02), loss=["sparse_categorical_crossentropy", "mse"],
                  loss_weights=[1.0, 0.5], metrics=[["accuracy"], []])
    x, m, yc, yr = two_output_data()
    history = model.fit([x, m], [yc, yr], batch_size=16, epochs=20, verbose=0,
                        validation_split=0.25)
    # Keras 3.15's names (checked against keras with the torch backend)
    assert sorted(history.history) == sorted(
        ["loss", "cls_loss", "reg_loss", "cls_accuracy",
         "val_loss", "val_cls_loss", "val_reg_loss", "val_cls_accuracy"])
    h = {k: v[-1] for k, v in history.history.items()}
    assert h["cls_accuracy"] > 0.8 and h["reg_loss"] < 0.3
    np.testing.assert_allclose(h["loss"], h["cls_loss"] + 0.5 * h["reg_loss"], rtol=0.05)
    values = model.evaluate([x, m], [yc, yr], return_dict=True)
    listed = model.evaluate([x, m], [yc, yr])
    assert model.metrics_names == ["loss", "cls_loss", "reg_loss", "cls_accuracy"]
    assert listed == pytest.approx([values[k] for k in model.metrics_names])
    assert values["loss"] == pytest.approx(values["cls_loss"] + 0.5 * values["reg_loss"],
                                           rel=1e-5)
    # dicts keyed by input and output names work as lists do
    as_dict = model.evaluate({"features": x, "meta": m}, {"cls": yc, "reg": yr},
                             return_dict=True)
    assert as_dict == pytest.approx(values)
    probs, reg = model.predict([x, m])
    assert probs.shape == (96, 3) and reg.shape == (96, 1)
    model.save(tmp_path / "two.minidl")
    loaded = load_model(tmp_path / "two.minidl")
    for got, want in zip(loaded.predict([x, m]), model.predict([x, m])):
        np.testing.assert_array_equal(got, want)
    assert loaded.evaluate([x, m], [yc, yr], return_dict=True) == pytest.approx(values)
    result = loaded.train_on_batch([x, m], [yc, yr], return_dict=True)
    assert set(result) == {"loss", "cls_loss", "reg_loss", "cls_accuracy"}


def test_dict_outputs_losses_and_metrics(active_backend):
    img, meta = layers.Input((6,), name="features"), layers.Input((3,), name="meta")
    h = layers.concatenate([img, meta])
    model = Model({"features": img, "meta": meta},
                  {"label": layers.Dense(3, activation="softmax")(h), "value": layers.Dense(1)(h)})
    model.compile("adam", loss={"label": "sparse_categorical_crossentropy", "value": "mse"},
                  metrics={"label": ["accuracy"]})
    x, m, yc, yr = two_output_data(n=32)
    history = model.fit({"features": x, "meta": m}, {"label": yc, "value": yr}, epochs=1,
                        verbose=0)
    assert {"label_loss", "value_loss", "label_accuracy"} <= set(history.history)
    out = model.predict({"features": x, "meta": m})
    assert set(out) == {"label", "value"} and out["label"].shape == (32, 3)
    with pytest.raises(ValueError, match="not output names"):
        model.compile("adam", loss={"labels": "mse"})
    with pytest.raises(ValueError, match="missing"):
        model.predict({"features": x})


def test_sample_weight_and_class_weight(active_backend):
    x, m, yc, yr = two_output_data(n=32)
    inp = layers.Input((6,))
    model = Model(inp, layers.Dense(3, activation="softmax")(inp))
    model.compile("sgd", "sparse_categorical_crossentropy")
    plain = model.evaluate(x, yc)
    double = model.evaluate(x, yc, sample_weight=np.full(32, 2.0))
    assert double == pytest.approx(2 * plain, rel=1e-5)
    half = np.where(np.arange(32) < 16, 1.0, 0.0)
    first = model.evaluate(x[:16], yc[:16])
    assert model.evaluate(x, yc, sample_weight=half) == pytest.approx(first / 2, rel=1e-5)
    w0 = model.get_weights()
    model.fit(x, yc, class_weight={0: 0.0, 1: 0.0, 2: 0.0}, epochs=1, verbose=0)
    for got, want in zip(model.get_weights(), w0):   # zero weight: no gradient at all
        np.testing.assert_allclose(got, want)
    model.fit(x, yc, class_weight={0: 1.0, 1: 2.0, 2: 3.0}, epochs=1, verbose=0)
    assert not np.allclose(model.get_weights()[0], w0[0])
    with pytest.raises(ValueError, match="sample_weight"):
        model.fit(x, yc, sample_weight=np.ones(5), verbose=0)


def test_nested_sequential_and_model_as_layer(active_backend, tmp_path):
    inner = Sequential([layers.Dense(8, activation="relu"), layers.Dense(3)], name="inner")
    outer = Sequential([layers.Input((4,)), inner, layers.Activation("softmax")])
    assert inner.built and outer.layers[0] is inner
    assert len(outer.weights) == 4 and outer.count_params() == inner.count_params() == 67
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0)
    outer.compile(optimizers.Adam(0.05), "sparse_categorical_crossentropy", metrics=["accuracy"])
    assert outer.fit(x, y, epochs=30, verbose=0).history["accuracy"][-1] > 0.85
    lines = []
    outer.summary(print_fn=lines.append)
    assert any("inner (Sequential)" in l and "67" in l for l in lines)
    outer.save(tmp_path / "nested.minidl")
    loaded = load_model(tmp_path / "nested.minidl")
    np.testing.assert_array_equal(loaded.predict(x), outer.predict(x))
    assert type(loaded.layers[0]).__name__ == "Sequential"
    again = Sequential.from_config(outer.get_config())
    assert [type(l).__name__ for l in again.layers] == ["Sequential", "Activation"]
    outer.save_weights(tmp_path / "w.minidl")
    again.load_weights(tmp_path / "w.minidl")
    np.testing.assert_array_equal(again.predict(x), outer.predict(x))


def test_sub_model_on_intermediate_tensors_shares_weights(active_backend):
    inp = layers.Input((5,))
    h = layers.Dense(6, activation="relu", name="block1")(inp)
    h = layers.Dense(4, activation="relu", name="block3")(h)
    full = Model(inp, layers.Dense(2, name="head")(h))
    features = Model(inputs=full.input, outputs=full.get_layer("block3").output)
    x = np.random.default_rng(0).normal(size=(7, 5)).astype(np.float32)
    assert features.output_shape == (None, 4) and len(features.weights) == 4
    head = full.get_layer("head")
    expected = features.predict(x) @ head.get_weights()[0] + head.get_weights()[1]
    np.testing.assert_allclose(full.predict(x), expected, rtol=1e-4, atol=1e-5)


def test_eager_calls_on_arrays(active_backend):
    dense = layers.Dense(3)
    x = np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32)
    y = dense(x)
    kernel, bias = dense.get_weights()
    np.testing.assert_allclose(y, x @ kernel + bias, rtol=1e-5, atol=1e-6)
    inp = layers.Input((5,))
    model = Model(inp, dense(inp))   # the layer keeps its weights when a model uses it
    np.testing.assert_allclose(model(x, training=False), y, rtol=1e-6)
    np.testing.assert_allclose(layers.add([x, x]), 2 * x)
    bn = Sequential([layers.Input((5,)), layers.BatchNormalization(momentum=0.0)])
    before = bn.layers[0].get_weights()[2].copy()
    bn(x + 3.0, training=True)    # training=True: batch statistics, moving ones updated
    assert not np.allclose(bn.layers[0].get_weights()[2], before)


@pytest.mark.parametrize("kwargs", [{}, {"center": False}, {"scale": False}])
def test_batch_normalization_called_in_inference_mode_still_learns(float64_backend, kwargs):
    # the fine-tuning guide's base_model(inputs, training=False) with trainable layers
    check_layer(layers.BatchNormalization(**kwargs), (3, 4, 5), training=False, batch=4)


def test_transfer_learning_frozen_base_then_fine_tune(active_backend, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 6)).astype(np.float32) + 2.0
    y = (x[:, 0] > 2.0).astype(int)
    base = Sequential([layers.Input((6,)), layers.Dense(8, activation="relu"),
                       layers.BatchNormalization()], name="base")
    base.trainable = False
    inputs = layers.Input((6,))
    features = base(inputs, training=False)
    outputs = layers.Dense(2, activation="softmax")(features)
    model = Model(inputs, outputs)
    assert len(model.trainable_weights) == 2 and len(model.weights) == 8
    lines = []
    model.summary(print_fn=lines.append, show_trainable=True)
    assert any("base (Sequential)" in l and l.rstrip().endswith("N") for l in lines)
    assert any("Non-trainable params: 88" in l for l in lines)
    frozen = base.get_weights()
    model.compile(optimizers.Adam(0.05), "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=10, verbose=0)
    for got, want in zip(base.get_weights(), frozen):   # moving statistics too (inference)
        np.testing.assert_array_equal(got, want)
    # unfreeze: takes effect at the next compile, BatchNormalization stays in inference mode
    base.trainable = True
    model.compile(optimizers.Adam(1e-3), "sparse_categorical_crossentropy", metrics=["accuracy"])
    assert len(model.trainable_weights) == 6
    model.fit(x, y, epochs=3, verbose=0)
    after = base.get_weights()
    assert not np.allclose(after[0], frozen[0])              # the Dense kernel fine-tuned
    assert not np.allclose(after[2], frozen[2])              # gamma too, in inference mode
    np.testing.assert_array_equal(after[4], frozen[4])        # moving mean: training=False
    model.save(tmp_path / "tl.minidl")
    loaded = load_model(tmp_path / "tl.minidl")
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))


def test_recompile_after_trainable_change_with_the_same_optimizer(active_backend):
    inp = layers.Input((3,))
    first = layers.Dense(4)
    model = Model(inp, layers.Dense(1)(first(inp)))
    opt = optimizers.SGD(0.1)
    model.compile(opt, "mse")
    x, y = np.ones((4, 3), np.float32), np.ones((4, 1), np.float32)
    model.fit(x, y, verbose=0)
    first.trainable = False
    model.fit(x, y, verbose=0)        # no recompile: the compiled weights still train
    with pytest.raises(ValueError, match="pass a new optimizer"):
        model.compile(opt, "mse")
    model.compile(optimizers.SGD(0.1), "mse")
    kernel = first.get_weights()[0]
    model.fit(x, y, verbose=0)
    np.testing.assert_array_equal(first.get_weights()[0], kernel)


def test_functional_config_round_trip_with_shared_layers(numpy_backend_only):
    model, _ = siamese()
    config = model.get_config()
    rebuilt = Model.from_config(config)
    assert rebuilt.get_config() == config
    a, b, _ = pairs(n=5)
    rebuilt.set_weights(model.get_weights())
    np.testing.assert_allclose(rebuilt.predict([a, b]), model.predict([a, b]), rtol=1e-6)
    shared = layers.Dense(3, name="shared")
    inp = layers.Input((3,))
    twice = Model(inp, layers.add([shared(inp), shared(shared(inp))]))
    config = twice.get_config()
    assert [n["args"] for n in config["layers"][1]["inbound_nodes"]] == \
        [[["input_layer", 0, 0]], [["input_layer", 0, 0]], [["shared", 1, 0]]] or \
        len(config["layers"][1]["inbound_nodes"]) == 3
    again = Model.from_config(config)
    assert len(again.weights) == 2
    again.set_weights(twice.get_weights())
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(again.predict(x), twice.predict(x), rtol=1e-6)


@pytest.fixture
def numpy_backend_only():
    minidl.set_backend("numpy")
    minidl.set_seed(0)


def test_shapes_and_errors(numpy_backend_only):
    inp = layers.Input(batch_shape=(None, 4), name="x")
    assert inp.shape == (None, 4) and inp.dtype == "float32"
    model = Model(inp, layers.Dense(2)(inp))
    other = layers.Input((4,))
    with pytest.raises(ValueError, match="not among the model's inputs"):
        Model(inp, layers.add([layers.Dense(4)(inp), other]))
    with pytest.raises(ValueError, match="input 'x' has shape"):
        model(layers.Input((5,)))
    assert layers.Input(shape=(None, 16)).shape == (None, None, 16)   # test_unknown_dims.py
    with pytest.raises(ValueError, match="positive ints"):
        layers.Input(shape=(None, 0))
    with pytest.raises(ValueError, match="2 arrays"):
        two_in_two_out().predict(np.ones((2, 6)))


def test_model_file_checks_hold_for_shared_and_nested_models(numpy_backend_only, tmp_path):
    import io
    import zipfile

    from minidl.models import ModelFileError
    model, _ = siamese()
    path = tmp_path / "s.minidl"
    model.save(path)
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    arrays = dict(np.load(io.BytesIO(members["weights.npz"])))
    assert len(arrays) == 6 and all(k.startswith("0000/base/") for k in list(arrays)[:4])

    def write(weights):
        buf = io.BytesIO()
        np.savez(buf, **weights)
        bad = tmp_path / "bad.minidl"
        with zipfile.ZipFile(bad, "w") as z:
            for name, data in dict(members, **{"weights.npz": buf.getvalue()}).items():
                z.writestr(name, data)
        return bad

    dropped = dict(arrays)
    dropped.pop(sorted(arrays)[0])
    with pytest.raises(ModelFileError, match="declares 6 weight arrays"):
        load_model(write(dropped))
    reshaped = dict(arrays)
    key = next(k for k in sorted(arrays) if arrays[k].ndim == 2)   # a nested kernel
    reshaped[key] = np.zeros((arrays[key].size,), np.float32)
    with pytest.raises(ModelFileError, match="has shape"):
        load_model(write(reshaped))
    assert load_model(write(arrays)).count_params() == model.count_params()


def test_a_shared_dropout_draws_a_mask_per_call(numpy_backend_only):
    inp = layers.Input((200,))
    drop = layers.Dropout(0.5)
    model = Model(inp, layers.concatenate([drop(inp), drop(inp)]))
    model.compile("sgd", "mse")
    x = np.ones((1, 200), np.float32)
    model._gradients(model._validate_x(x), [np.zeros((1, 400), np.float32)])
    out = np.array(model.graph._steps[-1].call.buffers.get("out", (1, 400)))
    first, second = out[0, :200] == 0, out[0, 200:] == 0
    assert 50 < first.sum() < 150 and 50 < second.sum() < 150
    assert (first != second).any()


def test_weighted_metrics_names_and_saving(numpy_backend_only, tmp_path):
    inp = layers.Input((6,))
    model = Model(inp, layers.Dense(3, activation="softmax")(inp))
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"],
                  weighted_metrics=["accuracy"])
    x, _, y, _ = two_output_data(n=16)
    history = model.fit(x, y, verbose=0)    # Keras 3.15's names
    assert sorted(history.history) == ["accuracy", "loss", "weighted_accuracy"]
    assert history.history["accuracy"] == history.history["weighted_accuracy"]
    model.fit(x, y, sample_weight=np.ones(16), verbose=0)
    model.save(tmp_path / "w.minidl")
    assert load_model(tmp_path / "w.minidl").metrics_names == ["loss", "accuracy",
                                                                 "weighted_accuracy"]
    model.compile("sgd", "sparse_categorical_crossentropy", weighted_metrics=["accuracy"])
    assert model.metrics_names == ["loss", "accuracy"]


def test_model_to_dot_draws_a_nested_model_as_one_node(numpy_backend_only):
    pytest.importorskip("pydot")
    inner = Sequential([layers.Input((3,)), layers.Dense(2)], name="inner")
    x = layers.Input((3,), name="x")
    model = Model(x, layers.Dense(1, name="head")(inner(x)))
    dot = minidl.utils.model_to_dot(model, show_shapes=True)
    name = {str(id(layer)): layer.name for layer in model.graph.layers}   # nodes are ids, as Keras's
    assert sorted((name[e.get_source()], name[e.get_destination()]) for e in dot.get_edges()) == \
        [("inner", "head"), ("x", "inner")]


def test_load_weights_into_a_rebuilt_nested_model_with_other_names(numpy_backend_only, tmp_path):
    first, _ = siamese()
    second, _ = siamese()          # the same code again: other automatic layer names
    assert first.layers[2].layers[1].name != second.layers[2].layers[1].name
    first.save_weights(tmp_path / "w.minidl")
    second.load_weights(tmp_path / "w.minidl")
    a, b, _ = pairs(n=4)
    np.testing.assert_array_equal(second.predict([a, b]), first.predict([a, b]))


def test_layer_build_takes_the_batch_axis_as_keras(active_backend):
    dense = layers.Dense(3)
    dense.build((None, 4))                     # the Keras transfer-learning guide's call
    assert dense.built and dense.input_shape == (4,)
    assert [w.shape for w in dense.get_weights()] == [(4, 3), (3,)]
    dense.trainable = False
    assert len(dense.weights) == 2 and not dense.trainable_weights
    dense.set_weights([np.ones((4, 3)), np.zeros(3)])
    np.testing.assert_allclose(dense(np.ones((2, 4))), np.full((2, 3), 4.0))
    model = Sequential([layers.Input((4,)), dense])          # keeps the weights it was given
    np.testing.assert_allclose(model.predict(np.ones((1, 4))), np.full((1, 3), 4.0))
    concat = layers.Concatenate()
    concat.build([(None, 2), (None, 3)])
    assert concat.output_shape == (5,)
    conv = layers.Conv2D(2, 3)
    conv.build((None, 8, 8, 3))
    assert conv.get_weights()[0].shape == (3, 3, 3, 2)
    with pytest.raises(ValueError, match="Dense .*batch axis first"):
        layers.Dense(2).build((4,))
    with pytest.raises(ValueError, match="was built for input shape"):
        dense.build((None, 5))


def test_functional_layers_list_the_input_layers_first(active_backend, tmp_path):
    model = two_in_two_out()
    kinds = [type(l).__name__ for l in model.layers]
    assert kinds[:2] == ["InputLayer", "InputLayer"] and "InputLayer" not in kinds[2:]
    assert model.get_layer(index=0) is model.layers[0] is model.inputs[0].layer
    assert model.get_layer(index=2) is model.layers[2]
    assert [w for l in model.layers for w in l.get_weights()] != []
    expected = [w for l in model.layers[2:] for w in l.get_weights()]
    for got, want in zip(model.get_weights(), expected, strict=True):
        np.testing.assert_array_equal(got, want)
    lines = []
    model.summary(print_fn=lines.append)
    assert sum("(InputLayer)" in line for line in lines) == 2
    model.save(tmp_path / "m.minidl")
    loaded = load_model(tmp_path / "m.minidl")
    assert [l.name for l in loaded.layers] == [l.name for l in model.layers]
    x, m, _, _ = two_output_data(n=3)
    xs = [x, m]
    for got, want in zip(loaded.predict(xs), model.predict(xs)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    model.save_weights(tmp_path / "w.minidl")
    loaded.load_weights(tmp_path / "w.minidl")
    sequential = Sequential([layers.Input((4,)), layers.Dense(2)])
    assert [type(l).__name__ for l in sequential.layers] == ["Dense"]   # as Keras's Sequential


def _weighted_hits(hits, w):
    """Keras's weighted mean: the sample weights broadcast over each sample's values."""
    w = np.broadcast_to(w.reshape((-1,) + (1,) * (hits.ndim - 1)), hits.shape)
    return float((hits * w).sum() / w.sum())


def test_weighted_metrics_weigh_each_hit_by_its_sample(active_backend):
    rng = np.random.default_rng(3)
    n = 40
    x = rng.normal(size=(n, 3, 6)).astype(np.float32)
    inp = layers.Input((3, 6))
    h = layers.Dense(8, activation="relu")(inp)
    cls = layers.Dense(4, activation="softmax", name="cls")(h)          # 3 positions per sample
    flags = layers.Dense(2, activation="sigmoid", name="flags")(layers.Flatten()(h))
    model = Model(inp, [cls, flags])
    model.compile("sgd", ["sparse_categorical_crossentropy", "binary_crossentropy"],
                  metrics={"cls": ["accuracy"]},
                  weighted_metrics={"cls": ["accuracy", "sparse_top_k_categorical_accuracy"],
                                    "flags": ["accuracy"]})
    yc = rng.integers(0, 4, size=(n, 3)).astype(np.float32)
    yf = (rng.random((n, 2)) > 0.5).astype(np.float32)
    w = np.round(rng.random(n) * 4) / 2                                   # 0, 0.5, ..., 2
    pc, pf = model.predict(x)
    got = model.evaluate(x, [yc, yf], sample_weight=w, batch_size=16, return_dict=True)
    hits = pc.argmax(-1) == yc
    assert got["cls_weighted_accuracy"] == pytest.approx(_weighted_hits(hits, w), rel=1e-6)
    assert got["cls_accuracy"] == pytest.approx(hits.mean(), rel=1e-6)     # metrics= unweighted
    assert _weighted_hits(hits, w) != pytest.approx(hits.mean(), rel=1e-3)
    larger = (pc > np.take_along_axis(pc, yc.astype(int)[..., None], -1)).sum(-1)
    assert got["cls_sparse_top_k_categorical_accuracy"] == pytest.approx(
        _weighted_hits(larger < 5, w), rel=1e-6)
    binary = (pf > 0.5) == (yf > 0.5)
    assert got["flags_accuracy"] == pytest.approx(_weighted_hits(binary, w), rel=1e-6)
    plain = model.evaluate(x, [yc, yf], return_dict=True)     # no weights: every weight 1
    assert plain["cls_weighted_accuracy"] == pytest.approx(hits.mean(), rel=1e-6)
    assert plain["flags_accuracy"] == pytest.approx(binary.mean(), rel=1e-6)
    zero = model.evaluate(x, [yc, yf], sample_weight=np.zeros(n), return_dict=True)
    assert zero["cls_weighted_accuracy"] == 0.0 and zero["flags_accuracy"] == 0.0
    history = model.fit(x, [yc, yf], sample_weight=w, batch_size=8, epochs=1, verbose=0,
                        validation_data=(x, [yc, yf], w))
    assert 0.0 <= history.history["val_cls_weighted_accuracy"][0] <= 1.0
    after = model.evaluate(x, [yc, yf], sample_weight=w, return_dict=True)
    assert history.history["val_flags_accuracy"][0] == pytest.approx(after["flags_accuracy"],
                                                                      rel=1e-6)


def test_a_metric_object_in_weighted_metrics_gets_the_sample_weights(active_backend):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(40, 6)).astype(np.float32)
    y = rng.integers(0, 3, 40).astype(np.float32)
    w = np.round(rng.random(40) * 4) / 2
    inp = layers.Input((6,))
    model = Model(inp, layers.Dense(3, activation="softmax")(inp))
    model.compile("sgd", "sparse_categorical_crossentropy", weighted_metrics=[
        "accuracy", minidl.metrics.SparseCategoricalAccuracy(name="object_accuracy")])
    got = model.evaluate(x, y, sample_weight=w, return_dict=True)
    want = _weighted_hits(model.predict(x).argmax(-1) == y, w)
    assert got["accuracy"] == pytest.approx(want, rel=1e-6)
    assert got["object_accuracy"] == pytest.approx(want, rel=1e-6)
