"""Keras 3's metrics on every backend against Keras 3.15.1's results (keras3_reference/metrics.json,
written by make_metrics.py in a venv with real Keras): two update_state calls, with and without
sample weights, then result(); the metric functions; names, configs, get / serialize /
deserialize; and the metrics in compile / fit with Keras's History keys."""

import json
import os
import re

import numpy as np
import pytest

import minidl
from minidl import autodiff, metrics

REFERENCE = json.load(open(os.path.join(os.path.dirname(__file__), "keras3_reference", "metrics.json")))


def _case_id(case):
    weighted = case["batches"][0]["sample_weight"] is not None
    return case["class"] + "".join(f"-{k}={v}" for k, v in case["kwargs"].items()) + ("-weighted" if weighted else "")


def _array(values):
    return None if values is None else np.asarray(values, np.float32)


@pytest.mark.parametrize("case", REFERENCE["classes"], ids=_case_id)
def test_metric_matches_keras(backend, case):
    with autodiff.on_backend(backend):
        metric = getattr(metrics, case["class"])(**case["kwargs"])
        for _ in range(2):          # a reset between runs leaves nothing behind
            for batch in case["batches"]:
                if batch["y_true"] is None:
                    metric.update_state(_array(batch["y_pred"]), sample_weight=_array(batch["sample_weight"]))
                else:
                    metric.update_state(_array(batch["y_true"]), _array(batch["y_pred"]),
                                        sample_weight=_array(batch["sample_weight"]))
            result = minidl.ops.convert_to_numpy(metric.result())
            np.testing.assert_allclose(result, np.asarray(case["result"]), rtol=2e-4, atol=2e-5)
            metric.reset_state()
    # Keras numbers the default names of its later instances (true_positives_1, ...)
    assert metric.name == re.sub("_[0-9]+$", "", case["name"])


@pytest.mark.parametrize("case", [c for c in REFERENCE["classes"] if c["batches"][0]["sample_weight"] is None],
                         ids=_case_id)
def test_config_round_trip(case):
    metric = getattr(metrics, case["class"])(**case["kwargs"])
    config = metric.get_config()
    for key, value in case["config"].items():
        if key not in ("dtype", "name"):
            assert config[key] == value, key
    again = metrics.deserialize(metrics.serialize(metric))
    assert type(again) is type(metric) and again.get_config() == config


@pytest.mark.parametrize("case", REFERENCE["functions"], ids=lambda c: c["name"])
def test_metric_function_matches_keras(backend, case):
    with autodiff.on_backend(backend):
        value = getattr(metrics, case["name"])(_array(case["y_true"]), _array(case["y_pred"]))
    np.testing.assert_allclose(value.numpy(), np.asarray(case["value"]), rtol=2e-4, atol=2e-5)


def test_get_serialize_deserialize_as_keras():
    assert type(metrics.get("mse")) is metrics.MeanSquaredError
    assert type(metrics.get("MAPE")) is metrics.MeanAbsolutePercentageError
    assert type(metrics.get("r2_score")) is metrics.R2Score
    assert type(metrics.get("TruePositives")) is metrics.TruePositives
    assert metrics.get("AUC").name == "auc"
    assert metrics.get(metrics.mean_squared_error) is metrics.mean_squared_error
    assert metrics.serialize(metrics.MeanSquaredError()) == {
        "module": "keras.metrics", "class_name": "MeanSquaredError",
        "config": {"name": "mean_squared_error", "dtype": "float32"}, "registered_name": None}
    assert metrics.serialize(metrics.mean_squared_error) == {
        "module": "builtins", "class_name": "function", "config": "mean_squared_error", "registered_name": "function"}
    assert metrics.deserialize(metrics.serialize(metrics.mean_squared_error)) is metrics.mean_squared_error
    with pytest.raises(ValueError, match="Could not interpret metric identifier"):
        metrics.get("no_such_metric")


@pytest.mark.parametrize("call, message", [
    (lambda: metrics.R2Score(class_aggregation="x"), "Invalid value for argument `class_aggregation`"),
    (lambda: metrics.R2Score(num_regressors=-1), "Invalid value for argument `num_regressors`"),
    (lambda: metrics.R2Score().update_state(np.ones(3), np.ones(3)), "R2Score expects 2D inputs"),
    (lambda: metrics.F1Score(average="x"), "Invalid `average` argument value"),
    (lambda: metrics.FBetaScore(beta=0), "Invalid `beta` argument value"),
    (lambda: metrics.F1Score(threshold=2.0), "Invalid `threshold` argument value"),
    (lambda: metrics.IoU(3, [0, 3]), "Target class id 3 is out of range"),
    (lambda: metrics.PrecisionAtRecall(1.5), "Argument `recall` must be in the range"),
    (lambda: metrics.SensitivityAtSpecificity(0.5, num_thresholds=0), "num_thresholds"),
])
def test_errors_as_keras(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_fit_history_keys_as_keras(active_backend):
    # the keys real Keras 3.15.1 gives for these metrics (a string logs under itself, an
    # instance under its name)
    rng = np.random.default_rng(0)
    x = rng.random((32, 4)).astype("float32")
    y = (rng.random((32, 1)) > 0.5).astype("float32")
    model = minidl.Sequential([minidl.layers.Input((4,)), minidl.layers.Dense(1, activation="sigmoid")])
    model.compile("sgd", "binary_crossentropy", metrics=[
        "mae", "mse", "mape", "msle", "poisson", "hinge", "squared_hinge", "binary_crossentropy", "AUC",
        metrics.RootMeanSquaredError(), metrics.TruePositives(), metrics.R2Score(), metrics.BinaryIoU(),
        metrics.F1Score(threshold=0.5), metrics.PrecisionAtRecall(0.5), metrics.PearsonCorrelation(),
        metrics.ConcordanceCorrelation(), metrics.LogCoshError(), metrics.KLDivergence(),
        metrics.SensitivityAtSpecificity(0.5)])
    history = model.fit(x, y, epochs=2, batch_size=16, verbose=0, validation_data=(x, y))
    expected = ["AUC", "binary_crossentropy", "binary_io_u", "concordance_correlation", "f1_score", "hinge",
                "kl_divergence", "logcosh", "loss", "mae", "mape", "mse", "msle", "pearson_correlation", "poisson",
                "precision_at_recall", "r2_score", "root_mean_squared_error", "sensitivity_at_specificity",
                "squared_hinge", "true_positives"]
    # (minidl's History also logs the learning rate)
    assert sorted(set(history.history) - {"learning_rate"}) == sorted(expected + ["val_" + k for k in expected])
    # the logged values are those of the metric run on the same data and weights
    check = metrics.MeanSquaredError()
    check.update_state(y, model.predict(x, verbose=0))
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0, return_dict=True)["mse"],
                               float(minidl.ops.convert_to_numpy(check.result())), rtol=1e-4)


def test_saved_model_keeps_its_metrics(tmp_path):
    minidl.set_backend("numpy")
    rng = np.random.default_rng(1)
    x = rng.random((24, 3)).astype("float32")
    y = (rng.random((24, 1)) > 0.5).astype("float32")
    model = minidl.Sequential([minidl.layers.Input((3,)), minidl.layers.Dense(1, activation="sigmoid")])
    model.compile("adam", "binary_crossentropy",
                  metrics=["mae", metrics.PrecisionAtRecall(0.4, num_thresholds=50, name="p_at_r"),
                           metrics.LogCoshError(), metrics.F1Score(threshold=0.3, average="micro")])
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    before = model.evaluate(x, y, verbose=0, return_dict=True)
    model.save(tmp_path / "m.minidl")
    loaded = minidl.models.load_model(tmp_path / "m.minidl")
    after = loaded.evaluate(x, y, verbose=0, return_dict=True)
    assert sorted(after) == sorted(before) == ["f1_score", "logcosh", "loss", "mae", "p_at_r"]
    for key, value in before.items():
        np.testing.assert_allclose(after[key], value, rtol=1e-5)
