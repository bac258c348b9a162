"""keras.losses.CTC and keras.losses.ctc on every backend: values, reductions, sample weights
and gradients against real Keras 3.15.1 (data/keras_ctc.npz, written by
data/make_keras_ctc.py); get / serialize / deserialize; the errors; and compile(loss="ctc"):
fit on a small sequence-labelling task (targets (N, L), output (N, T, C) logits), sample
weights, and a saved model's loss."""

import os

import numpy as np
import pytest

import minidl
from minidl import autodiff, layers, losses, ops, optimizers
from minidl.models import Model, load_model

KERAS = np.load(os.path.join(os.path.dirname(__file__), "data", "keras_ctc.npz"))
T, C = 8, 4


def _on(backend, array):
    return autodiff.Tensor(backend.from_numpy(np.ascontiguousarray(array, np.float32)), backend,
                           requires_grad=True)


def test_values_reductions_and_gradient_match_keras(backend):
    labels, logits = KERAS["labels"], KERAS["logits"]
    with autodiff.on_backend(backend):
        np.testing.assert_allclose(losses.ctc(labels, _on(backend, logits)).numpy(), KERAS["values"],
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(losses.CTC(reduction="sum")(labels, _on(backend, logits)).numpy(),
                                   KERAS["sum"], rtol=1e-5)
        weighted = losses.CTC()(labels, _on(backend, logits), sample_weight=KERAS["weights"])
        np.testing.assert_allclose(weighted.numpy(), KERAS["weighted"], rtol=1e-5)
        tape = autodiff.Tape(backend)
        pred = _on(backend, logits)
        with autodiff.recording(tape):
            value = losses.CTC()(ops.convert_to_tensor(labels, backend=backend), pred)
        (grad,) = tape.gradients([value], [ops.ones((), backend=backend)], [pred])
    np.testing.assert_allclose(value.numpy(), KERAS["mean"], rtol=1e-5)
    np.testing.assert_allclose(grad.numpy(), KERAS["grad"], rtol=1e-4, atol=1e-5)


def test_config_and_lookup():
    loss = losses.get("ctc")
    assert isinstance(loss, losses.CTC) and loss.per_sample
    assert repr(sorted(loss.get_config().items())) == str(KERAS["config"])
    assert losses.deserialize("ctc") is losses.ctc
    again = losses.get(losses.serialize(losses.CTC(reduction="sum", name="seq")))
    assert isinstance(again, losses.CTC) and (again.reduction, again.name) == ("sum", "seq")
    with pytest.raises(ValueError, match="dtype"):
        losses.CTC(dtype="int8")


@pytest.mark.parametrize("y_true, y_pred, message", [
    (np.ones((2, 3, 1)), np.zeros((2, 5, 4)), r"y_true.shape=\(2, 3, 1\)"),
    (np.ones((2, 3)), np.zeros((2, 4)), r"y_pred.shape=\(2, 4\)"),
    (np.ones((3, 2)), np.zeros((2, 5, 4)), r"y_true of shape \(3, 2\) and y_pred of shape \(2, 5, 4\)"),
    (np.array([[1, 4]]), np.zeros((1, 5, 4)), r"labels must be in \[0, 3\].*\(1, 5, 4\)"),
    (np.array([[1.5, 2]]), np.zeros((1, 5, 4)), "whole class labels")])
def test_bad_arguments_name_the_argument_and_shapes(y_true, y_pred, message):
    with pytest.raises(ValueError, match=message):
        losses.ctc(y_true, y_pred)


def _task(n=48, seed=0):
    """Sequences of T steps whose odd steps show labels 1..C-1 (one-hot, noisy); the targets
    are those labels, 1 to 3 of them, padded with the blank 0."""
    rng = np.random.default_rng(seed)
    x = 0.1 * rng.standard_normal((n, T, C)).astype(np.float32)
    y = np.zeros((n, 3), np.int32)
    for i in range(n):
        labels = rng.integers(1, C, rng.integers(1, 4))
        y[i, :len(labels)] = labels
        x[i, 2 * np.arange(len(labels)) + 1, labels] += 1.0
    return x, y


def _model(loss="ctc", **compile_kwargs):
    inputs = minidl.Input((T, C))
    model = Model(inputs, layers.Dense(C)(layers.Dense(16, activation="relu")(inputs)))
    model.compile(optimizer=optimizers.Adam(0.02), loss=loss, **compile_kwargs)
    return model


def test_fit_learns_a_sequence_labelling_task_and_saves(active_backend, tmp_path):
    x, y = _task()
    model = _model(losses.CTC())
    history = model.fit(x, y, epochs=8, batch_size=16, verbose=0).history["loss"]
    assert np.all(np.isfinite(history)) and history[-1] < 0.6 * history[0]
    # evaluate's loss is the mean CTC loss of the predictions
    expected = float(np.mean(losses.ctc(y, model.predict(x, verbose=0)).numpy()))
    assert model.evaluate(x, y, verbose=0) == pytest.approx(expected, rel=1e-4)
    path = tmp_path / "ctc.minidl"
    model.save(path)
    loaded = load_model(path)
    assert isinstance(loaded.loss, losses.CTC)
    assert loaded.evaluate(x, y, verbose=0) == pytest.approx(expected, rel=1e-4)
    loaded.fit(x, y, epochs=1, batch_size=16, verbose=0)


def test_fit_gradient_with_sample_weights_and_sum(active_backend):
    """One SGD step of Dense(C) on (T, C) sequences moves the kernel by the tape gradient of
    Keras's CTC (sample weights: sum(w * loss) / N; reduction "sum": the batch's sum)."""
    x, y = _task(6, seed=1)
    weights = np.linspace(0.0, 2.0, 6).astype(np.float32)
    for reduction, sample_weight in (("sum_over_batch_size", weights), ("sum", None)):
        inputs = minidl.Input((T, C))
        model = Model(inputs, layers.Dense(C)(inputs))
        model.compile(optimizer=optimizers.SGD(1.0), loss=losses.CTC(reduction=reduction))
        kernel, bias = [w.copy() for w in model.get_weights()]
        b = model.backend
        with autodiff.on_backend(b):
            tape = autodiff.Tape(b)
            k, c = _on(b, kernel), _on(b, bias)
            with autodiff.recording(tape):
                pred = ops.matmul(ops.convert_to_tensor(x, backend=b), k) + c
                value = losses.CTC(reduction=reduction)(y, pred, sample_weight=sample_weight)
            dk, dc = tape.gradients([value], [ops.ones((), backend=b)], [k, c])
        reported = model.train_on_batch(x, y, sample_weight=sample_weight)
        assert reported == pytest.approx(float(value.numpy()), rel=1e-4)
        new_kernel, new_bias = model.get_weights()
        np.testing.assert_allclose(kernel - new_kernel, dk.numpy(), rtol=1e-3, atol=1e-5)
        np.testing.assert_allclose(bias - new_bias, dc.numpy(), rtol=1e-3, atol=1e-5)


def test_targets_of_any_length_padded_at_the_end():
    x, y = _task(8)
    model = _model()
    wide = np.concatenate([y, np.zeros((8, 9), np.int32)], 1)   # wider than the T = 8 steps
    assert model.evaluate(x, wide, verbose=0) == pytest.approx(model.evaluate(x, y[:, :3], verbose=0))
    assert model.evaluate(x, y.astype(np.float64), verbose=0) == pytest.approx(model.evaluate(x, y, verbose=0))


@pytest.mark.parametrize("y, message", [
    (np.ones((8,), np.int32), r"labels of shape \(N, max_length\).*\(8,\)"),
    (np.full((8, 2), 4), r"labels in \[0, 3\] for an output of shape \(None, 8, 4\)"),
    (np.tile([[0, 1]], (8, 1)), "padded with 0 \\(the blank\\) at the end only"),
    (np.ones((8, 9), np.int32), r"at most 8 labels .*\(None, 8, 4\), got a row of 9 labels")])
def test_bad_targets_in_fit(y, message):
    x, _ = _task(8)
    with pytest.raises(ValueError, match=message):
        _model().fit(x, y, epochs=1, verbose=0)


def test_compile_errors():
    with pytest.raises(ValueError, match="loss 'ctc' scores whole samples.*without metrics"):
        _model(metrics=["accuracy"])
    inputs = minidl.Input((C,))
    model = Model(inputs, layers.Dense(C)(inputs))
    model.compile(optimizer="sgd", loss="ctc")
    with pytest.raises(ValueError, match=r"output of shape \(None, T, C\)"):
        model.fit(np.zeros((4, C), np.float32), np.ones((4, 2), np.int32), verbose=0)


def test_output_of_unknown_length():
    """Input((None, C)): the steps come with each batch; the labels are padded to them."""
    x, y = _task(16)
    inputs = minidl.Input((None, C))
    model = Model(inputs, layers.Dense(C)(inputs))
    model.compile(optimizer="sgd", loss="ctc")
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    for steps in (T, 6):
        expected = float(np.mean(losses.ctc(y, model.predict(x[:, :steps], verbose=0)).numpy()))
        assert model.evaluate(x[:, :steps], y, verbose=0) == pytest.approx(expected, rel=1e-4)
