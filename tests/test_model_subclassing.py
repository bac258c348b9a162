"""Model subclassing (call) and custom train_step / test_step, on every backend."""

import numpy as np
import pytest

import minidl
from minidl import layers, ops, optimizers
from minidl.models import Model, Sequential


@pytest.fixture(params=[b for b in ("numpy", "cpu", "opencl") if b in minidl.available_backends()])
def active_backend(request):
    backend = minidl.set_backend(request.param)
    yield backend
    minidl.set_backend("numpy")


class MLP(minidl.Model):
    def __init__(self, units=16, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.hidden = layers.Dense(units, activation="relu")
        self.out = layers.Dense(3, activation="softmax")

    def call(self, inputs, training=False):
        return self.out(self.hidden(inputs))

    def get_config(self):
        return dict(super().get_config(), units=self.units)


class SmallCNN(minidl.Model):
    """Layers in a list, a BatchNormalization that follows `training`, ops between layers."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.blocks = [layers.Conv2D(4, 3, activation="relu"), layers.BatchNormalization(),
                       layers.MaxPooling2D(2)]
        self.flatten = layers.Flatten()
        self.head = layers.Dense(2, activation="softmax")

    def call(self, inputs, training=False):
        x = inputs
        for block in self.blocks:
            x = block(x, training=training)
        return self.head(self.flatten(x) * 0.5)


def small_cnn_sequential():
    return Sequential([layers.Conv2D(4, 3, activation="relu"), layers.BatchNormalization(),
                       layers.MaxPooling2D(2), layers.Flatten(),
                       layers.Lambda(lambda t: t * 0.5), layers.Dense(2, activation="softmax")])


def data(rng, shape, classes, n=48):
    x = rng.normal(size=(n,) + shape).astype(np.float32)
    return x, rng.integers(0, classes, n)


def train_both(a, b, x, y, epochs=3):
    b.build((None,) + x.shape[1:])
    a.build((None,) + x.shape[1:])
    b.set_weights(a.get_weights())
    for m in (a, b):
        m.compile(optimizer=optimizers.SGD(0.1), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    histories = [m.fit(x, y, batch_size=16, epochs=epochs, verbose=0, shuffle=False).history
                 for m in (a, b)]
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(histories[0]["loss"], histories[1]["loss"], rtol=1e-4)
    return histories[0]


def test_subclassed_mlp_trains_to_the_weights_of_sequential(active_backend):
    x, y = data(np.random.default_rng(0), (8,), 3)
    minidl.set_seed(3)
    mlp = MLP()
    mlp.build((None, 8))
    minidl.set_seed(3)
    seq = Sequential([layers.Input((8,)), layers.Dense(16, activation="relu"),
                      layers.Dense(3, activation="softmax")])
    for a, b in zip(mlp.get_weights(), seq.get_weights()):   # the same draws, in call order
        np.testing.assert_array_equal(a, b)
    history = train_both(MLP(), seq, x, y)
    assert history["loss"][-1] < history["loss"][0]


def test_subclassed_cnn_trains_to_the_weights_of_sequential(active_backend):
    x, y = data(np.random.default_rng(1), (8, 8, 2), 2)
    model = SmallCNN()
    train_both(model, small_cnn_sequential(), x, y, epochs=2)
    # the moving statistics moved in training only: inference uses them, not the batch's
    bn = model.blocks[1]
    mean = bn.get_weights()[2]
    assert np.any(mean != 0)
    model.predict(x, verbose=0)
    np.testing.assert_array_equal(bn.get_weights()[2], mean)


def test_training_reaches_dropout_inside_call(active_backend):
    class Dropping(minidl.Model):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(64)
            self.drop = layers.Dropout(0.5)

        def call(self, inputs, training=False):
            return self.drop(self.dense(inputs), training=training)

    model = Dropping()
    x = np.ones((4, 8), np.float32)
    inference = model(x)
    np.testing.assert_array_equal(inference, model.predict(x, verbose=0))
    dropped = model(x, training=True)
    assert np.mean(dropped == 0) > 0.2 and np.mean(inference == 0) < 0.2


def test_dropout_inside_call_draws_the_masks_of_sequential(active_backend):
    class Dropping(minidl.Model):
        def __init__(self):
            super().__init__()
            self.stack = [layers.Dense(32, activation="relu"), layers.Dropout(0.4),
                          layers.Dense(3, activation="softmax")]

        def call(self, inputs, training=False):
            for layer in self.stack:
                inputs = layer(inputs, training=training)
            return inputs

    x, y = data(np.random.default_rng(8), (8,), 3)
    seq = Sequential([layers.Dense(32, activation="relu"), layers.Dropout(0.4),
                      layers.Dense(3, activation="softmax")])
    model = Dropping()
    seq.seed = model.seed    # a new mask every step, the same as Sequential's at that position
    train_both(model, seq, x, y)


class Siamese(minidl.Model):
    """One Dense (and one Dropout) called on both inputs, as Keras allows."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.shared = layers.Dense(6, activation="tanh")
        self.drop = layers.Dropout(0.3)
        self.head = layers.Dense(3, activation="softmax")

    def call(self, inputs, training=False):
        a = self.drop(self.shared(inputs[0]), training=training)
        b = self.drop(self.shared(inputs[1]), training=training)
        return self.head(a - b * 0.5)


def siamese_functional():
    inputs = [layers.Input((4,)), layers.Input((4,))]
    shared, drop = layers.Dense(6, activation="tanh"), layers.Dropout(0.3)
    a, b = (drop(shared(t)) for t in inputs)
    return Model(inputs, layers.Dense(3, activation="softmax")(
        layers.Lambda(lambda ab: ab[0] - ab[1] * 0.5)([a, b])))


def test_a_layer_called_twice_in_call_trains_as_a_shared_graph_layer(active_backend):
    x, y = data(np.random.default_rng(9), (8,), 3)
    pair = [x[:, :4], x[:, 4:]]
    model, graph = Siamese(), siamese_functional()
    # inference: each call keeps its own output (the second does not overwrite the first)
    model.predict(pair, verbose=0)
    (w, bias), (w2, b2) = model.shared.get_weights(), model.head.get_weights()
    logits = (np.tanh(pair[0] @ w + bias) - 0.5 * np.tanh(pair[1] @ w + bias)) @ w2 + b2
    want = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    np.testing.assert_allclose(model.predict(pair, verbose=0), want, rtol=1e-4, atol=1e-6)
    graph.set_weights(model.get_weights())
    graph.seed = model.seed     # the Dropout sits at the same position: the same masks
    for m in (model, graph):
        m.compile(optimizer=optimizers.SGD(0.2), loss="sparse_categorical_crossentropy")
        m.fit(pair, y, batch_size=16, epochs=3, verbose=0, shuffle=False)
    for a, b in zip(model.get_weights(), graph.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


class TwoHeads(minidl.Model):
    def __init__(self, as_dict):
        super().__init__()
        self.as_dict = as_dict
        self.trunk = layers.Dense(8, activation="relu")
        self.heads = {"cls": layers.Dense(3, activation="softmax"), "reg": layers.Dense(2)}

    def call(self, inputs):
        h = self.trunk(inputs)
        out = {k: head(h) for k, head in self.heads.items()}
        return out if self.as_dict else [out["cls"], out["reg"]]


@pytest.mark.parametrize("as_dict", [False, True], ids=["list", "dict"])
def test_several_outputs_train_as_the_functional_model(active_backend, as_dict):
    x, yc = data(np.random.default_rng(10), (5,), 3)
    yr = np.random.default_rng(11).normal(size=(len(x), 2)).astype(np.float32)
    inputs = layers.Input((5,))
    h = layers.Dense(8, activation="relu")(inputs)
    graph = Model(inputs, {"cls": layers.Dense(3, activation="softmax", name="cls")(h),
                           "reg": layers.Dense(2, name="reg")(h)})
    model = TwoHeads(as_dict)
    model.build((None, 5))
    graph.set_weights(model.get_weights())
    losses = {"cls": "sparse_categorical_crossentropy", "reg": "mse"}
    histories = []
    for m, keyed in ((model, as_dict), (graph, True)):
        m.compile(optimizer=optimizers.SGD(0.1), loss=losses if keyed else list(losses.values()),
                  loss_weights={"cls": 1.0, "reg": 0.5} if keyed else [1.0, 0.5])
        y = {"cls": yc, "reg": yr} if keyed else [yc, yr]
        histories.append(m.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False).history)
    for a, b in zip(model.get_weights(), graph.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(histories[0]["loss"], histories[1]["loss"], rtol=1e-4)
    assert ("cls_loss" if as_dict else "output_0_loss") in histories[0]
    predicted = model.predict(x[:4], verbose=0)
    assert (sorted(predicted) == ["cls", "reg"]) if as_dict else (
        [p.shape for p in predicted] == [(4, 3), (4, 2)])


def test_weights_layers_and_summary_follow_keras(active_backend):
    model = MLP(name="mlp")
    assert [l.name for l in model.layers] == [model.hidden.name, model.out.name]
    assert model.weights == [] and not model.built
    lines = []
    model.summary(print_fn=lines.append)
    assert any("?" in l and "0 (unbuilt)" in l for l in lines)
    with pytest.raises(ValueError, match="has not yet been built"):
        model.save_weights("never.weights.h5")
    model.build((None, 5))
    assert [w.shape for w in model.weights] == [(5, 16), (16,), (16, 3), (3,)]
    assert [w.name for w in model.trainable_weights] == ["kernel", "bias"] * 2
    assert model.count_params() == 5 * 16 + 16 + 16 * 3 + 3
    lines = []
    model.summary(print_fn=lines.append)
    assert any("(None, 16)" in l for l in lines) and "Total params: 147" in lines
    model.trainable = False
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    assert model.trainable_weights == []


def test_save_and_load_weights_round_trip(active_backend, tmp_path):
    x, y = data(np.random.default_rng(2), (6,), 3)
    model = MLP(units=12)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y, epochs=1, verbose=0)
    path = str(tmp_path / "mlp.weights.minidl")
    model.save_weights(path)
    again = MLP.from_config(model.get_config(), custom_objects={"MLP": MLP})
    assert again.units == 12 and again.name == model.name
    again.build((None, 6))
    assert not np.array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))
    again.load_weights(path)
    np.testing.assert_array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))


def test_save_and_load_model_with_custom_objects(active_backend, tmp_path):
    x, y = data(np.random.default_rng(13), (8,), 3)
    pair = [x[:, :4], x[:, 4:]]
    for model, inputs in ((MLP(units=10), x), (Siamese(), pair)):
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        model.fit(inputs, y, epochs=1, verbose=0)
        path = str(tmp_path / f"{model.name}.minidl")
        model.save(path)
        with pytest.raises(minidl.models.ModelFileError, match="custom_objects"):
            minidl.models.load_model(path)
        again = minidl.models.load_model(path, custom_objects={"MLP": MLP, "Siamese": Siamese})
        assert type(again) is type(model) and again.name == model.name
        np.testing.assert_array_equal(again.predict(inputs, verbose=0),
                                      model.predict(inputs, verbose=0))
        with minidl.saving.custom_object_scope({"MLP": MLP, "Siamese": Siamese}):
            # a file asking for an unbounded build is refused before any code runs
            header = model.saved_architecture()
            header["input_shapes"] = [[1 << 20, 1 << 20]]
            with pytest.raises(minidl.models.ModelFileError, match="at most"):
                type(model).restore(header, path, minidl.models.ModelFileError)
        # the optimizer state came back too: one more epoch moves both alike
        for m in (model, again):
            m.fit(inputs, y, epochs=1, verbose=0, shuffle=False)
        for a, b in zip(model.get_weights(), again.get_weights()):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_subclassed_model_nested_both_ways(active_backend):
    x, y = data(np.random.default_rng(3), (8,), 3)
    inner = MLP(units=8)
    inputs = layers.Input((8,))
    outer = Model(inputs, inner(layers.Dense(8)(inputs)))
    seq = Sequential([layers.Input((8,)), MLP(units=8)])

    encoder_in = layers.Input((8,))
    encoder = Model(encoder_in, layers.Dense(8, activation="relu")(encoder_in))

    class WithEncoder(minidl.Model):
        def __init__(self):
            super().__init__()
            self.encoder = encoder
            self.head = layers.Dense(3, activation="softmax")

        def call(self, inputs, training=False):
            return self.head(self.encoder(inputs, training=training))

    holder = WithEncoder()
    holder.build((None, 8))
    for model in (outer, seq, holder):
        model.compile(optimizer=optimizers.SGD(0.5), loss="sparse_categorical_crossentropy")
        before = model.get_weights()
        history = model.fit(x, y, batch_size=16, epochs=4, verbose=0).history
        assert history["loss"][-1] < history["loss"][0]
        assert all(not np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    assert [l.name for l in outer.layers][-1] == inner.name
    assert len(holder.weights) == 4 and holder.layers[0] is encoder


class Residual(minidl.Model):
    def __init__(self, units):
        super().__init__()
        self.inner = layers.Dense(units, activation="relu")
        self.outer = layers.Dense(units)

    def call(self, inputs):
        return self.outer(self.inner(inputs)) + inputs


class Tower(minidl.Model):
    def __init__(self):
        super().__init__()
        self.stem = layers.Dense(8)
        self.blocks = [Residual(8), Residual(8)]
        self.head = layers.Dense(3, activation="softmax")

    def call(self, inputs, training=False):
        x = self.stem(inputs)
        for block in self.blocks:
            x = block(x, training=training)
        return self.head(x)


def test_subclassed_models_inside_a_subclassed_model(active_backend, tmp_path):
    x, y = data(np.random.default_rng(12), (4,), 3)
    tower = Tower()
    tower.compile(optimizer=optimizers.SGD(0.3), loss="sparse_categorical_crossentropy")
    history = tower.fit(x, y, batch_size=16, epochs=4, verbose=0).history
    assert history["loss"][-1] < history["loss"][0]
    assert [w.shape for w in tower.blocks[0].weights] == [(8, 8), (8,)] * 2
    assert len(tower.get_weights()) == 2 + 8 + 2 and tower.count_params() == 40 + 288 + 27
    tower.save_weights(str(tmp_path / "tower.weights.minidl"))
    again = Tower()
    again.build((None, 4))
    again.load_weights(str(tmp_path / "tower.weights.minidl"))
    np.testing.assert_array_equal(again.predict(x, verbose=0), tower.predict(x, verbose=0))


class GuideModel(minidl.Model):
    """Keras's customizing-fit guide's CustomModel, minidl's way."""

    def train_step(self, data):
        x, y = data
        weights = self.trainable_weights
        with minidl.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred)
        self.optimizer.apply(tape.gradient(loss, weights), weights)
        return self.compute_metrics(x, y, y_pred)


def regression(rng, n=64):
    x = rng.normal(size=(n, 4)).astype(np.float32)
    return x, (x @ np.array([[1.0], [-2.0], [0.5], [0.0]], np.float32)).astype(np.float32)


def mae(y_true, y_pred):
    return ops.mean(ops.abs(y_true - y_pred), axis=-1)


def test_custom_train_step_matches_the_fused_step(active_backend):
    x, y = regression(np.random.default_rng(4))
    models = []
    for cls in (GuideModel, Model):
        inputs = layers.Input((4,))
        models.append(cls(inputs, layers.Dense(1)(layers.Dense(8, activation="tanh")(inputs))))
    models[0].set_weights(models[1].get_weights())
    histories = []
    for m in models:
        m.compile(optimizer=optimizers.SGD(0.05), loss="mse", metrics=[mae])
        histories.append(m.fit(x, y, batch_size=16, epochs=5, verbose=0, shuffle=False).history)
    for a, b in zip(*(m.get_weights() for m in models)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert set(histories[0]) == {"loss", "mae"}
    np.testing.assert_allclose(histories[0]["loss"], histories[1]["loss"], rtol=1e-4)
    assert histories[0]["loss"][-1] < 0.5 * histories[0]["loss"][0]
    assert models[0].evaluate(x, y, return_dict=True).keys() == {"loss", "mae"}


class Delegating(minidl.Model):
    """A step that hands over to the default one (Keras's super().train_step)."""

    def train_step(self, data):
        self.steps_seen = getattr(self, "steps_seen", 0) + 1
        return super().train_step(data)


def test_default_train_step_with_sample_weights_matches_the_fused_step(active_backend):
    rng = np.random.default_rng(7)
    x, y = data(rng, (6,), 3)
    weights = rng.uniform(0.0, 2.0, len(x))
    models = []
    for cls in (Delegating, Model):
        inputs = layers.Input((6,))
        models.append(cls(inputs, layers.Dense(3, activation="softmax")(
            layers.Dense(8, activation="relu")(inputs))))
    models[0].set_weights(models[1].get_weights())
    histories = [m.compile(optimizer=optimizers.SGD(0.1), loss="sparse_categorical_crossentropy",
                           metrics=["accuracy"]) or
                 m.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False,
                       sample_weight=weights).history for m in models]
    assert models[0].steps_seen == 9
    for a, b in zip(*(m.get_weights() for m in models)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    for key in ("loss", "accuracy"):
        np.testing.assert_allclose(histories[0][key], histories[1][key], rtol=1e-4)


class Uniform(minidl.Model):
    """A test_step scoring predictions of its own, not the output layer's."""

    def test_step(self, data):
        x, y = data
        y_pred = self(x) * 0.0 + 1.0 / 3.0
        return self.compute_metrics(x, y, y_pred)


def test_compute_metrics_scores_the_step_predictions(active_backend):
    x, y = data(np.random.default_rng(14), (4,), 3)
    model = Uniform(*_graph(4))
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    assert model.evaluate(x, y) == pytest.approx(np.log(3.0), rel=1e-5)


class LowLevel(minidl.Model):
    """The guide's lower-level variant: its own loss, metric objects and metrics property."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = layers.Dense(8, activation="tanh")
        self.out = layers.Dense(1)
        self.loss_tracker = minidl.metrics.Mean(name="loss")
        self.loss_fn = minidl.losses.MeanSquaredError()

    def call(self, inputs):
        return self.out(self.hidden(inputs))

    def train_step(self, data):
        x, y = data
        with minidl.GradientTape() as tape:
            loss = self.loss_fn(y, self(x, training=True))
        weights = self.trainable_weights
        self.optimizer.apply(tape.gradient(loss, weights), weights)
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    def test_step(self, data):
        x, y = data
        self.loss_tracker.update_state(self.loss_fn(y, self(x)))
        return {"loss": self.loss_tracker.result()}

    @property
    def metrics(self):
        return [self.loss_tracker]


def test_low_level_train_step_with_its_own_metrics(active_backend):
    x, y = regression(np.random.default_rng(5))
    model = LowLevel()
    model.compile(optimizer=optimizers.SGD(0.05))
    history = model.fit(x, y, batch_size=16, epochs=5, verbose=0).history
    assert history["loss"][-1] < 0.5 * history["loss"][0]
    assert model.evaluate(x, y) == pytest.approx(
        float(np.mean((model.predict(x, verbose=0) - y) ** 2)), rel=1e-4)


def step_transfers(model, compile_args, x, y, epochs):
    backend = minidl.get_backend()
    model.compile(**compile_args)
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    backend.synchronize()
    backend.reset_stats()
    model.fit(x, y, batch_size=16, epochs=epochs, verbose=0)
    return backend.stats()


@pytest.mark.parametrize("make", [MLP, lambda: GuideModel(*_graph())], ids=["call", "train_step"])
def test_no_host_transfer_inside_a_step_on_opencl(make):
    if "opencl" not in minidl.available_backends():
        pytest.skip("no OpenCL platform")
    minidl.set_backend("opencl")
    try:
        x, y = data(np.random.default_rng(6), (8,), 3, n=64)
        args = dict(optimizer="sgd", loss="sparse_categorical_crossentropy")
        one, three = (step_transfers(make(), args, x, y, epochs) for epochs in (1, 3))
    finally:
        minidl.set_backend("numpy")
    assert one["h2d_count"] == 2 * 4            # each step's x and y
    assert one["d2h_count"] == 1                # the epoch's loss
    assert three["h2d_count"] == 3 * one["h2d_count"]
    assert three["d2h_count"] == 3 * one["d2h_count"]


def _graph(features=8):
    inputs = layers.Input((features,))
    return inputs, layers.Dense(3, activation="softmax")(inputs)


def test_errors_name_the_model_and_the_argument():
    with pytest.raises(ValueError, match="defines call"):
        MLP(inputs=layers.Input((3,)))
    model = MLP()
    with pytest.raises(ValueError, match="input_shape must be"):
        model.build(8)
    with pytest.raises(ValueError, match="unknown loss|loss"):
        model.compile(optimizer="sgd", loss="no_such_loss")
    with pytest.raises(ValueError, match="a loss is required"):
        Model(*_graph()).compile(optimizer="sgd")
    guide = GuideModel(*_graph())
    guide.compile(optimizer="sgd")
    with pytest.raises(ValueError, match="compile the model with a loss"):
        guide.fit(np.ones((4, 8), np.float32), np.zeros(4), verbose=0)
