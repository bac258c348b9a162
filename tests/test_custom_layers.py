"""Layers written with minidl.ops train like the built-in ones, on every backend."""

import numpy as np
import pytest

import minidl
from minidl import layers, ops, optimizers
from minidl.models import Sequential


@pytest.fixture(params=[b for b in ("numpy", "cpu", "opencl") if b in minidl.available_backends()])
def active_backend(request):
    backend = minidl.set_backend(request.param)
    yield backend
    minidl.set_backend("numpy")


class Linear(layers.Layer):
    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal")
        self.b = self.add_weight(shape=(self.units,), initializer="zeros")

    def call(self, inputs):
        return ops.matmul(inputs, self.w) + self.b

    def get_config(self):
        return dict(super().get_config(), units=self.units)


def test_linear_from_ops_trains_to_the_weights_of_dense(active_backend):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 8)).astype(np.float32)
    y = rng.integers(0, 3, 64)
    minidl.set_seed(1)
    custom = Sequential([layers.Input((8,)), Linear(16), layers.Activation("relu"),
                         layers.Dense(3, activation="softmax")])
    assert custom.layers[0].output_shape == (16,)    # inferred by running call
    minidl.set_seed(1)
    dense = Sequential([layers.Input((8,)), layers.Dense(16, activation="relu"),
                        layers.Dense(3, activation="softmax")])
    dense.set_weights(custom.get_weights())
    for m in (custom, dense):
        m.compile(optimizer=optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
        m.fit(x, y, batch_size=16, epochs=3, verbose=0)
    for a, b in zip(custom.get_weights(), dense.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def second_epoch_transfers(make_model, compile_args, x, y):
    """The opencl transfer counts of a model's second epoch (the first builds the programs)."""
    if "opencl" not in minidl.available_backends():
        pytest.skip("no OpenCL platform")
    backend = minidl.set_backend("opencl")
    try:
        m = make_model()
        m.compile(**compile_args)
        m.fit(x, y, batch_size=16, epochs=1, verbose=0)
        backend.synchronize()
        backend.reset_stats()
        m.fit(x, y, batch_size=16, epochs=1, verbose=0)
        return backend.stats()
    finally:
        minidl.set_backend("numpy")


def test_custom_layer_on_opencl_moves_nothing_inside_a_step():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 8)).astype(np.float32)
    y = rng.integers(0, 3, 32)
    stats = second_epoch_transfers(
        lambda: Sequential([layers.Input((8,)), Linear(16), layers.Dense(3, activation="softmax")]),
        dict(optimizer="sgd", loss="sparse_categorical_crossentropy"), x, y)
    assert stats["h2d_count"] == 2 * 2      # each step's x and y
    assert stats["d2h_count"] == 1          # the epoch's loss


def euclidean_distance(vectors):
    a, b = vectors[:, :4], vectors[:, 4:]
    return ops.sqrt(ops.maximum(ops.sum(ops.square(a - b), axis=1, keepdims=True), 1e-7))


def contrastive_loss(y_true, y_pred, margin=1.0):
    square_pred = ops.square(y_pred)
    margin_square = ops.square(ops.maximum(margin - y_pred, 0.0))
    return ops.mean((1.0 - y_true) * square_pred + y_true * margin_square)


def pairs(rng, n):
    """Pairs of 4-vectors side by side; label 1 for pairs drawn from the same cluster."""
    centers = rng.normal(size=(2, 4)) * 3
    first = rng.integers(0, 2, n)
    same = rng.integers(0, 2, n)
    second = np.where(same == 1, first, 1 - first)
    x = np.concatenate([centers[first], centers[second]], axis=1) + rng.normal(size=(n, 8)) * 0.3
    return x.astype(np.float32), same.astype(np.float32)


def siamese():
    inp = layers.Input((8,))
    h = layers.Dense(8, activation="relu")(inp)
    out = layers.Lambda(euclidean_distance)(h)
    return minidl.Model(inp, out)


def test_siamese_with_lambda_distance_and_contrastive_loss_learns(active_backend):
    rng = np.random.default_rng(0)
    x, y = pairs(rng, 256)
    minidl.set_seed(3)
    m = siamese()
    assert m.output_shape == (None, 1)
    m.compile(optimizer=optimizers.Adam(0.01), loss=contrastive_loss)
    history = m.fit(x, y, batch_size=32, epochs=8, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.6 * losses[0], losses


def test_function_loss_matches_its_builtin_and_metrics_match(active_backend):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(48, 6)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 48)]
    results = []
    for loss, metrics in (("categorical_crossentropy", ["categorical_accuracy"]),
                          (lambda t, p: minidl.losses.categorical_crossentropy(t, p),
                           [minidl.metrics.CategoricalAccuracy(name="acc_class"),
                            minidl.metrics.categorical_accuracy])):
        minidl.set_seed(5)
        m = Sequential([layers.Input((6,)), layers.Dense(3, activation="softmax")])
        m.compile(optimizer=optimizers.SGD(0.1), loss=loss, metrics=metrics)
        h = m.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
        results.append((h.history, m.get_weights()))
    (fused, w_fused), (function, w_function) = results
    np.testing.assert_allclose(function["loss"], fused["loss"], rtol=1e-4)
    np.testing.assert_allclose(function["acc_class"], fused["categorical_accuracy"], rtol=1e-6)
    np.testing.assert_allclose(function["categorical_accuracy"], fused["categorical_accuracy"],
                               rtol=1e-6)
    for a, b in zip(w_fused, w_function):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


class MeanAbsoluteError(minidl.metrics.Metric):
    def __init__(self, name="my_mae", **kwargs):
        super().__init__(name=name, **kwargs)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.total.assign_add(ops.sum(ops.abs(y_true - y_pred)))
        self.count.assign_add(float(np.prod(ops.shape(y_pred))))

    def result(self):
        return self.total / self.count


def test_custom_metric_class_matches_the_numbers(active_backend):
    rng = np.random.default_rng(2)
    a = rng.normal(size=(10, 3)).astype(np.float32)
    b = rng.normal(size=(10, 3)).astype(np.float32)
    metric = MeanAbsoluteError()
    metric.update_state(ops.convert_to_tensor(a[:4]), ops.convert_to_tensor(b[:4]))
    metric.update_state(ops.convert_to_tensor(a[4:]), ops.convert_to_tensor(b[4:]))
    np.testing.assert_allclose(float(ops.convert_to_numpy(metric.result())),
                               np.abs(a - b).mean(), rtol=1e-5)
    metric.reset_state()
    metric.update_state(ops.convert_to_tensor(a[:2]), ops.convert_to_tensor(b[:2]))
    np.testing.assert_allclose(float(ops.convert_to_numpy(metric.result())),
                               np.abs(a[:2] - b[:2]).mean(), rtol=1e-5)


def test_precision_recall_auc_against_direct_counts(active_backend):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 200).astype(np.float32)
    p = np.clip(y * 0.3 + rng.uniform(size=200) * 0.7, 0, 1).astype(np.float32)
    pos, truth = p > 0.5, y > 0.5
    precision, recall, auc = minidl.metrics.Precision(), minidl.metrics.Recall(), minidl.metrics.AUC()
    for metric in (precision, recall, auc):
        metric.update_state(ops.convert_to_tensor(y), ops.convert_to_tensor(p))
    assert float(ops.convert_to_numpy(precision.result())) == pytest.approx(
        (pos & truth).sum() / pos.sum(), rel=1e-5)
    assert float(ops.convert_to_numpy(recall.result())) == pytest.approx(
        (pos & truth).sum() / truth.sum(), rel=1e-5)
    # the exact ROC AUC: the probability that a positive outranks a negative
    exact = (p[truth][:, None] > p[~truth][None, :]).mean()
    assert float(ops.convert_to_numpy(auc.result())) == pytest.approx(exact, abs=0.01)


def test_save_and_load_with_custom_objects(tmp_path):
    minidl.set_backend("numpy")
    rng = np.random.default_rng(4)
    x, y = pairs(rng, 64)
    inp = layers.Input((8,))
    h = Linear(8, name="linear")(inp)
    out = layers.Lambda(euclidean_distance)(h)
    m = minidl.Model(inp, out)
    m.compile(optimizer="adam", loss=contrastive_loss)
    m.fit(x, y, batch_size=16, epochs=1, verbose=0)
    path = str(tmp_path / "siamese.minidl")
    m.save(path)
    with pytest.raises(ValueError, match="unknown layer class 'Linear'"):
        minidl.models.load_model(path)
    with pytest.raises(ValueError, match="'euclidean_distance' is not known"):
        minidl.models.load_model(path, custom_objects={"Linear": Linear})
    with pytest.raises(ValueError, match="unknown loss 'contrastive_loss'"):
        minidl.models.load_model(path, custom_objects={"Linear": Linear,
                                                       "euclidean_distance": euclidean_distance})
    loaded = minidl.models.load_model(path, custom_objects={
        "Linear": Linear, "euclidean_distance": euclidean_distance,
        "contrastive_loss": contrastive_loss})
    np.testing.assert_allclose(loaded.predict(x), m.predict(x), rtol=1e-6)
    loaded.fit(x, y, batch_size=16, epochs=1, verbose=0)


def test_lambda_of_a_lambda_expression_refuses_to_save(tmp_path):
    minidl.set_backend("numpy")
    inp = layers.Input((3,))
    m = minidl.Model(inp, layers.Lambda(lambda t: t * 2.0)(inp))
    m.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="named module-level function"):
        m.save(str(tmp_path / "m.minidl"))
    assert not (tmp_path / "m.minidl").exists()


def test_custom_loss_and_metrics_on_opencl_move_nothing_inside_a_step():
    x, y = pairs(np.random.default_rng(5), 64)
    stats = second_epoch_transfers(siamese, dict(
        optimizer="adam", loss=contrastive_loss,
        metrics=[minidl.metrics.BinaryAccuracy(), minidl.metrics.AUC(),
                 minidl.losses.mean_absolute_error]), x, y)
    assert stats["h2d_count"] == 2 * 4      # each step's x and y
    assert stats["d2h_count"] == 1 + 3      # the epoch's loss and each metric's result


class Residual(layers.Layer):
    """A custom layer built from built-in layers (called on tensors in call) and ops."""

    def __init__(self, units, gate_trainable=False, **kwargs):
        super().__init__(**kwargs)
        self.inner = layers.Dense(units, activation="tanh")
        self.gate_trainable = gate_trainable

    def build(self, input_shape):
        self.gate = self.add_weight(name="gate", shape=(input_shape[-1],), initializer="ones",
                                    trainable=self.gate_trainable)

    def call(self, inputs):
        return inputs + self.inner(inputs) * self.gate


def test_custom_layer_made_of_a_builtin_layer_matches_the_functional_graph(active_backend):
    rng = np.random.default_rng(6)
    x = rng.normal(size=(48, 5)).astype(np.float32)
    y = rng.normal(size=(48, 5)).astype(np.float32)
    minidl.set_seed(2)
    custom = Sequential([layers.Input((5,)), Residual(5), layers.Dense(5)])
    assert [w.shape for w in custom.layers[0].weights] == [(5,), (5, 5), (5,)]
    inp = layers.Input((5,))
    out = layers.Dense(5)(layers.Add()([inp, layers.Dense(5, activation="tanh")(inp)]))
    plain = minidl.Model(inp, out)
    weights = custom.get_weights()          # gate (ones) first, then the Dense weights
    np.testing.assert_array_equal(weights[0], np.ones(5, np.float32))
    plain.set_weights(weights[1:])
    for m in (custom, plain):
        m.compile(optimizer=optimizers.SGD(0.05), loss="mse")
        m.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
    got, want = custom.get_weights(), plain.get_weights()
    for a, b in zip(got[1:], want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(got[0], np.ones(5, np.float32))    # not trainable


def test_trainable_weight_of_a_composite_layer_trains(active_backend):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(32, 3)).astype(np.float32)
    m = Sequential([layers.Input((3,)), Residual(3, gate_trainable=True)])
    m.compile(optimizer=optimizers.SGD(0.1), loss="mse")
    history = m.fit(x, x * 0.5, batch_size=16, epochs=5, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert not np.allclose(m.get_weights()[0], 1.0)


module_level_lambda = lambda t: t * 2.0  # noqa: E731 - what the test is about


def test_a_module_level_lambda_cannot_be_saved_either(tmp_path):
    minidl.set_backend("numpy")
    inp = layers.Input((3,))
    m = minidl.Model(inp, layers.Lambda(module_level_lambda)(inp))
    m.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="Lambda 'lambda.*named module-level function"):
        m.save(str(tmp_path / "m.minidl"))
    plain = minidl.Model(inp, layers.Dense(3)(inp))
    plain.compile(optimizer="sgd", loss=module_level_lambda)
    with pytest.raises(ValueError, match="loss .* cannot be saved"):
        plain.save(str(tmp_path / "m.minidl"))


def test_class_metrics_survive_save_and_load(tmp_path):
    minidl.set_backend("numpy")
    x, y = pairs(np.random.default_rng(8), 32)
    m = siamese()
    m.compile(optimizer="sgd", loss="mse", metrics=[minidl.metrics.AUC(), minidl.metrics.Recall(),
                                                    MeanAbsoluteError()])
    m.fit(x, y, batch_size=16, epochs=1, verbose=0)
    path = str(tmp_path / "m.minidl")
    m.save(path)
    loaded = minidl.models.load_model(path, custom_objects={
        "euclidean_distance": euclidean_distance, "my_mae": MeanAbsoluteError})
    assert loaded.metrics_names == ["loss", "auc", "recall", "my_mae"]
    np.testing.assert_allclose(loaded.evaluate(x, y), m.evaluate(x, y), rtol=1e-5)


class GatedSum(layers.Layer):
    """A custom layer on a list of inputs."""

    def build(self, input_shape):
        self.mix = self.add_weight(name="mix", shape=(input_shape[0][-1],), initializer="zeros")

    def call(self, inputs):
        a, b = inputs
        gate = ops.sigmoid(self.mix)
        return a * gate + b * (1.0 - gate)


def test_custom_layer_with_a_list_of_inputs_trains_every_branch(active_backend):
    rng = np.random.default_rng(10)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x @ rng.normal(size=(4, 3))).astype(np.float32)
    inp = layers.Input((4,))
    left, right = layers.Dense(3, name="left")(inp), layers.Dense(3, name="right")(inp)
    out = GatedSum()([left, right])
    m = minidl.Model(inp, out)
    assert m.output_shape == (None, 3)
    before = [w.copy() for w in m.get_weights()]
    m.compile(optimizer=optimizers.Adam(0.05), loss="mse")
    history = m.fit(x, y, batch_size=16, epochs=5, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    for a, b in zip(before, m.get_weights()):
        assert not np.allclose(a, b)        # both branches and the gate moved


def pair_distance(vectors):
    a, b = vectors
    return ops.sqrt(ops.maximum(ops.sum(ops.square(a - b), axis=1, keepdims=True), 1e-7))


def shared_siamese(branch):
    left, right = layers.Input((4,)), layers.Input((4,))
    distance = layers.Lambda(pair_distance)([layers.Activation("relu")(branch(left)),
                                             layers.Activation("relu")(branch(right))])
    return minidl.Model([left, right], distance)


def test_siamese_with_two_inputs_and_a_shared_custom_branch(active_backend):
    rng = np.random.default_rng(11)
    x, y = pairs(rng, 256)
    minidl.set_seed(4)
    custom = shared_siamese(Linear(8, name="branch"))   # one layer, called on both inputs
    dense = shared_siamese(layers.Dense(8, name="branch"))
    assert len(custom.get_weights()) == 2
    dense.set_weights(custom.get_weights())
    histories = []
    for m in (custom, dense):
        m.compile(optimizer=optimizers.Adam(0.01), loss=contrastive_loss)
        histories.append(m.fit([x[:, :4], x[:, 4:]], y, batch_size=32, epochs=10, verbose=0,
                               shuffle=False).history["loss"])
    assert histories[0][-1] < 0.7 * histories[0][0], histories[0]
    np.testing.assert_allclose(histories[0], histories[1], rtol=1e-4)
    for a, b in zip(custom.get_weights(), dense.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)


def test_add_weight_regularizer_and_constraint_in_a_custom_layer(active_backend):
    """A custom layer's add_weight(regularizer=, constraint=) works as on built-in layers: the
    penalty joins the loss and its gradient the weight's; the constraint holds after a step."""
    from minidl import constraints, regularizers

    class Scale(layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], 2), initializer="ones", name="w",
                                     regularizer=regularizers.l2(0.5),
                                     constraint=constraints.NonNeg())

        def call(self, x):
            return ops.matmul(x, self.w)

    inp = minidl.Input((3,))
    model = minidl.Model(inp, Scale()(inp))
    model.compile(optimizer=optimizers.SGD(learning_rate=2.0), loss="mse")
    x, y = np.zeros((4, 3), np.float32), np.zeros((4, 2), np.float32)
    assert model.evaluate(x, y, verbose=0) == pytest.approx(0.5 * 6)   # l2: 0.5 * sum(w^2)
    model.train_on_batch(x, y)          # w -= 2 * (0.5 * 2 w) = -w, clipped to 0 by NonNeg
    np.testing.assert_array_equal(model.get_weights()[0], np.zeros((3, 2), np.float32))
