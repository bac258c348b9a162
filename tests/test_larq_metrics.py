"""larq's flip_ratio metric (lq.metrics.FlipRatio, quantizers' and layers' metrics=,
lq.context.metrics_scope) and what carries it into fit's logs: Keras 3's layer-owned metrics
(a Metric set as a layer's attribute is one of the model's metrics, reset each epoch, logged
under its name), on every backend."""

import numpy as np
import pytest

import minidl
import minidl.larq as lq


def result(metric):
    return float(np.asarray(metric.result()))


def test_flip_ratio_is_larqs(active_backend):
    """larq's docstring example: 0, then 1 (both values changed), then 0.75 (the mean of 1 and 0.5);
    a reset keeps the previous values but forgets the means, as larq's reset_states."""
    m = lq.metrics.FlipRatio()
    m.update_state(np.array([1.0, 1.0], np.float32))
    assert result(m) == 0.0
    m.update_state(np.array([2.0, 2.0], np.float32))
    assert result(m) == 1.0
    m.update_state(np.array([1.0, 2.0], np.float32))
    assert result(m) == 0.75
    m.reset_state()
    m.update_state(np.array([1.0, 2.0], np.float32))    # compared with nothing: the first update
    assert result(m) == 0.0
    m.update_state(np.array([1.0, 1.0], np.float32))
    assert result(m) == 0.5
    assert m.name == "flip_ratio" and m.get_config() == {"name": "flip_ratio", "values_dtype": "int8"}


def flip_model(**layer_metrics):
    signs = dict(kernel_quantizer="ste_sign", kernel_constraint="weight_clip")
    return minidl.Sequential([
        minidl.layers.Input((10,)),
        lq.layers.QuantDense(16, **signs, **layer_metrics),
        lq.layers.QuantDense(2, input_quantizer="ste_sign", activation="softmax", **signs)])


class KernelSigns(minidl.callbacks.Callback):
    """The first layer's kernel signs at the start of every training batch (what its forward
    quantizes), per epoch."""

    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_begin(self, batch, logs=None):
        kernel = self.model.layers[0].get_weights()[0]
        self.epochs[-1].append(np.where(kernel >= 0, 1, -1))


def test_fit_logs_the_flip_ratio_of_each_kernel(active_backend):
    """In metrics_scope every kernel quantizer tracks its flips; fit's logs hold, per epoch, the
    mean fraction of kernel signs that changed between consecutive steps (larq: the first step
    of an epoch only records, its count having been reset)."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((64, 10)).astype(np.float32), rng.integers(0, 2, 64)
    with lq.context.metrics_scope(["flip_ratio"]):
        model = flip_model()
    assert lq.context.get_training_metrics() == set()             # the scope is over
    first, second = (layer.kernel_quantizer.flip_ratio.name for layer in model.layers)
    assert first.startswith("flip_ratio/ste_sign") and first != second
    model.compile(minidl.optimizers.Adam(0.05), "sparse_categorical_crossentropy", metrics=["accuracy"])
    signs = KernelSigns()
    history = model.fit(x, y, epochs=3, batch_size=16, verbose=0, callbacks=[signs])
    assert set(history.history) == {"loss", "accuracy", first, second}
    assert model.metrics_names == ["loss", "accuracy", first, second]
    for epoch, steps in enumerate(signs.epochs):
        flips = [np.mean(a != b) for a, b in zip(steps[:-1], steps[1:])]
        assert history.history[first][epoch] == pytest.approx(np.mean(flips), abs=1e-6)
    assert max(history.history[first]) > 0                          # some signs did flip
    # evaluate resets the model's metrics, and inference updates no flip ratio
    assert model.evaluate(x, y, verbose=0)[2:] == [0.0, 0.0]


def test_metrics_arguments(active_backend):
    layer = flip_model(metrics=["flip_ratio"]).layers[0]             # larq's older layer argument
    assert layer.kernel_quantizer.flip_ratio.name == f"flip_ratio/{layer.kernel_quantizer.name}"
    quantizer = lq.quantizers.SteSign(metrics=["flip_ratio"])
    assert isinstance(quantizer.flip_ratio, lq.metrics.FlipRatio)
    with pytest.raises(ValueError, match=r"unknown training metric\(s\) \['flips'\]"):
        lq.quantizers.SteSign(metrics=["flips"])
    with pytest.raises(ValueError, match="unknown training metric"):
        with lq.context.metrics_scope(["accuracy"]):
            pass
    with pytest.raises(TypeError, match="metrics must be a list"):
        lq.quantizers.SteSign(metrics="flip_ratio")
    with pytest.raises(ValueError, match="no kernel quantizer"):
        lq.layers.QuantDense(3, metrics=["flip_ratio"])


class Tracked(minidl.layers.Layer):
    """A Keras 3 layer owning a metric it updates in training (the pattern of keras-io's
    examples and of larq's quantizers)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = minidl.layers.Dense(2)
        self.seen = minidl.metrics.Mean(name="seen")

    def call(self, x, training=None):
        if training:
            self.seen.update_state(minidl.ops.ones((3,)) * 2.0)
        return self.dense(x)


def test_a_metric_a_layer_owns_is_one_of_the_models(active_backend):
    """As Keras 3.15.1 (torch backend) prints for the same script: history keys ['loss', 'seen'],
    seen [2.0, 2.0], model.metrics ['loss', 'seen'] (minidl's lists no loss tracker), and
    evaluate's [loss, 0.0]: it resets the metric, and inference does not update it."""
    inputs = minidl.layers.Input((3,))
    model = minidl.Model(inputs, Tracked()(inputs))
    model.compile("sgd", "mse")
    history = model.fit(np.ones((8, 3), np.float32), np.ones((8, 2), np.float32), epochs=2, batch_size=4,
                        verbose=0)
    assert sorted(history.history) == ["loss", "seen"] and history.history["seen"] == [2.0, 2.0]
    assert [m.name for m in model.metrics][-1:] == ["seen"]
    assert model.evaluate(np.ones((8, 3), np.float32), np.ones((8, 2), np.float32), verbose=0)[1] == 0.0
