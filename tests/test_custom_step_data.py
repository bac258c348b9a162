"""What fit / evaluate hand to a train_step / test_step of your own (Keras 3: the data as given,
nested, unchecked against the model's outputs), a model without Input or call trained by its
train_step (Keras's VAE recipe), compile(metrics=...) without a loss feeding compute_metrics,
and a loss of your own reading targets shaped otherwise than the output; every backend.

The expected batches and numbers were printed by Keras 3.15.1 (torch backend) running the same
code in the side venv; Keras's int64 labels are minidl's int32, so dtypes compare by kind."""

import numpy as np
import pytest

import minidl
from minidl import layers, ops


def describe(data):
    """A batch's nesting with each array's shape and dtype kind, as the Keras run printed it."""
    if isinstance(data, (list, tuple)):
        return type(data).__name__ + "(" + ", ".join(describe(v) for v in data) + ")"
    if isinstance(data, dict):
        return "{" + ", ".join(f"{k}: {describe(v)}" for k, v in data.items()) + "}"
    kind = "float" if str(data.dtype).startswith("float") else "int"
    return f"{kind}{tuple(ops.shape(data))}"


class Recording(minidl.Model):
    """A subclassed model whose call returns two outputs and whose steps record their data."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(2)
        self.seen = []

    def call(self, x):
        y = self.dense(x)
        return y, y

    def train_step(self, data):
        self.seen.append("train " + describe(data))
        return {"loss": 0.0}

    def test_step(self, data):
        self.seen.append("test " + describe(data))
        return {"loss": 0.0}


def _taken(model, call):
    model.seen.clear()
    call()
    return model.seen


def test_batches_a_custom_step_receives(backend):
    x = np.ones((5, 3))                      # float64: the step gets float32
    labels = np.arange(5)
    m = Recording()
    m.compile("adam")
    fit = dict(batch_size=4, verbose=0, shuffle=False)
    # Keras 3.15.1: train Tensor(4, 3) float32, then Tensor(1, 3): x alone, no targets
    assert _taken(m, lambda: m.fit(x, **fit)) == ["train float(4, 3)", "train float(1, 3)"]
    assert _taken(m, lambda: m.fit(x, labels, **fit)) == [
        "train tuple(float(4, 3), int(4,))", "train tuple(float(1, 3), int(1,))"]
    # a tuple y for the two outputs, one sample_weight array repeated for each of y's arrays
    assert _taken(m, lambda: m.fit(x, (x.astype("float32"), labels), sample_weight=np.ones(5),
                                   **fit))[0] == \
        "train tuple(float(4, 3), tuple(float(4, 3), int(4,)), tuple(float(4,), float(4,)))"
    assert _taken(m, lambda: m.evaluate(x, batch_size=4, verbose=0)) == [
        "test float(4, 3)", "test float(1, 3)"]
    assert _taken(m, lambda: m.evaluate(x, (labels, labels), batch_size=4, verbose=0))[0] == \
        "test tuple(float(4, 3), tuple(int(4,), int(4,)))"
    # validation_split: the last 40% go to test_step, as given
    assert _taken(m, lambda: m.fit(x, labels, batch_size=4, verbose=0, validation_split=0.4)) == [
        "train tuple(float(3, 3), int(3,))", "test tuple(float(2, 3), int(2,))"]
    assert _taken(m, lambda: m.train_on_batch(x, labels)) == ["train tuple(float(5, 3), int(5,))"]


def test_class_weight_reaches_the_step_as_sample_weights(backend):
    seen = []

    class M(Recording):
        def train_step(self, data):
            seen.append([ops.convert_to_numpy(d).tolist() for d in data[1:]])
            return {"loss": 0.0}

    m = M()
    m.compile("adam")
    x = np.ones((4, 3), "float32")
    m.fit(x, np.array([0, 1, 1, 0]), class_weight={0: 1.0, 1: 2.5}, verbose=0, shuffle=False)
    m.fit(x, np.eye(2)[[0, 1, 1, 0]], class_weight={0: 1.0, 1: 2.5}, verbose=0, shuffle=False)
    # Keras 3.15.1: [[0, 1, 1, 0], [1.0, 2.5, 2.5, 1.0]], then the one-hot rows and the same weights
    assert seen[0] == [[0, 1, 1, 0], [1.0, 2.5, 2.5, 1.0]]
    assert seen[1] == [[[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]], [1.0, 2.5, 2.5, 1.0]]


def test_a_dict_x_reaches_the_step_as_a_dict(backend):
    seen = []

    class Functional(minidl.Model):
        def train_step(self, data):
            seen.append(describe(data))
            return {"loss": 0.0}

    a, b = layers.Input((3,), name="a"), layers.Input((1,), name="b")
    m = Functional({"a": a, "b": b}, layers.Dense(2)(layers.Concatenate()([a, b])))
    m.compile("adam")
    m.fit({"a": np.ones((5, 3)), "b": np.arange(5)[:, None]}, [np.arange(5)], batch_size=4,
          verbose=0, shuffle=False)
    # Keras 3.15.1: tuple({a: Tensor(4, 3) float32, b: ... int64}, list(Tensor(4,) int64))
    assert seen == ["tuple({a: float(4, 3), b: int(4, 1)}, list(int(4,)))",
                    "tuple({a: float(1, 3), b: int(1, 1)}, list(int(1,)))"]


class TwoOutputs(minidl.Model):
    """Gap 25's model: call returns (logits, logits); the step scores the first only."""

    def __init__(self):
        super().__init__()
        self.dense = layers.Dense(3)

    def call(self, x):
        y = self.dense(x)
        return y, y

    def train_step(self, data):
        x, y = data
        with minidl.GradientTape() as tape:
            logits = self(x)[0]
            loss = self.compute_loss(x=x, y=y, y_pred=logits)
        self.optimizer.apply(tape.gradient(loss, self.trainable_weights), self.trainable_weights)
        return self.compute_metrics(x, y, logits)


def test_two_output_call_trains_on_one_target(backend):
    rng = np.random.default_rng(0)
    x = rng.random((64, 4)).astype("float32")
    y = (x[:, 0] * 3).astype(int)
    m = TwoOutputs()
    m.compile(minidl.optimizers.Adam(0.05), minidl.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    history = m.fit(x, y, epochs=5, batch_size=16, verbose=0)
    # Keras names the compiled loss and metric of the y_pred the step gives, without a prefix
    assert set(history.history) == {"loss", "accuracy"}
    assert history.history["loss"][-1] < history.history["loss"][0]


class VAE(minidl.Model):
    """Keras's VAE recipe in small: no Input, no call; train_step uses the encoder and decoder."""

    def __init__(self, encoder, decoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder, self.decoder = encoder, decoder
        self.loss_tracker = minidl.metrics.Mean(name="loss")

    @property
    def metrics(self):
        return [self.loss_tracker]

    def train_step(self, data):
        with minidl.GradientTape() as tape:
            loss = ops.mean(ops.square(self.decoder(self.encoder(data)) - data))
        grads = tape.gradient(loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}


def test_vae_pattern_trains_without_input(backend):
    minidl.utils.set_random_seed(3)
    encoder = minidl.Sequential([layers.Input((6,)), layers.Dense(3, activation="tanh")])
    decoder = minidl.Sequential([layers.Input((3,)), layers.Dense(6)])
    vae = VAE(encoder, decoder)
    vae.compile(optimizer=minidl.optimizers.Adam(0.02))
    assert len(vae.trainable_weights) == 4
    x = np.random.default_rng(1).random((64, 6)).astype("float32")
    losses = vae.fit(x, epochs=6, batch_size=16, verbose=0).history["loss"]
    assert losses[-1] < 0.8 * losses[0], losses
    assert encoder.predict(x[:5], verbose=0).shape == (5, 3)


W = np.array([[0.5, -0.2, 0.1], [-0.3, 0.4, 0.2], [0.1, 0.1, -0.5], [0.2, -0.1, 0.3]], "float32")
X = np.array([[0.1, 0.9, 0.2, 0.4], [0.8, 0.1, 0.3, 0.2], [0.3, 0.3, 0.9, 0.1], [0.6, 0.2, 0.1, 0.7],
              [0.2, 0.7, 0.5, 0.3], [0.9, 0.4, 0.2, 0.1]], "float32")


def test_compile_metrics_without_loss_reach_compute_metrics(backend):
    class Scored(minidl.Model):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(3)

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):
            x, y = data
            return self.compute_metrics(x, y, self(x))

        def test_step(self, data):
            x, y = data
            return self.compute_metrics(x, y, self(x))

    y = np.array([1, 0, 2, 0, 2, 1])
    m = Scored()
    m(X)
    m.dense.set_weights([W, np.zeros(3, "float32")])
    m.compile("adam", metrics=["accuracy", minidl.metrics.SparseTopKCategoricalAccuracy(k=2, name="top2")])
    history = m.fit(X, y, batch_size=4, verbose=0, shuffle=False)
    # Keras 3.15.1: {'accuracy': [0.5], 'loss': [0.0], 'top2': [0.6666666865348816]}
    assert set(history.history) == {"loss", "accuracy", "top2"}
    assert history.history["loss"] == [0.0]
    assert history.history["accuracy"][0] == pytest.approx(0.5)
    assert history.history["top2"][0] == pytest.approx(0.6666666865348816)
    results = m.evaluate(X, y, batch_size=4, verbose=0, return_dict=True)
    assert results["accuracy"] == pytest.approx(0.5) and results["top2"] == pytest.approx(2 / 3)


def first_column_loss(y_true, y_pred):
    return ops.mean(ops.square(y_pred[:, :1] - y_true))


def test_custom_loss_takes_targets_of_another_shape(backend):
    model = minidl.Sequential([layers.Input((4,)), layers.Dense(3)])
    bias = np.array([0.1, 0, 0], "float32")
    model.set_weights([W, bias])
    model.compile("sgd", loss=first_column_loss)
    t = np.array([[0.5], [-0.2], [0.3], [0.0], [1.0], [0.4]], "float32")
    by_hand = float(np.mean(((X @ W + bias)[:, :1] - t) ** 2))
    value = model.evaluate(X, t, verbose=0, batch_size=6)
    # Keras 3.15.1: 0.3123166859149933
    assert value == pytest.approx(0.3123166859149933, rel=1e-5)
    assert value == pytest.approx(by_hand, rel=1e-5)
    losses = model.fit(X, t, epochs=5, batch_size=6, verbose=0).history["loss"]
    # Keras 3.15.1 (SGD 0.01): [0.31232, 0.31073, 0.30915, 0.30759, 0.30603]
    np.testing.assert_allclose(losses, [0.3123166561126709, 0.3107263445854187, 0.30914926528930664,
                                        0.3075850307941437, 0.30603355169296265], rtol=1e-4)


def test_builtin_loss_still_checks_target_shape(backend):
    # Keras 3.15.1 fails too (RuntimeError: the sizes 3 and 2 do not broadcast)
    model = minidl.Sequential([layers.Input((4,)), layers.Dense(3)])
    model.compile("sgd", loss="mse")
    with pytest.raises(ValueError, match=r"expects targets of shape \(None, 3\)"):
        model.fit(X, np.ones((6, 2), "float32"), verbose=0)
