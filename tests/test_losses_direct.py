"""A built-in loss called directly, loss(y_true, y_pred), and its function form run the
backend's fused loss kernels (the ones model.fit runs) as one differentiable op: values and
gradients inside a GradientTape against float64 central differences and the formulas, on
every backend; y_pred of rank 3 and sample weights (a gradient that differs per row); and a
spy showing that the kernel, not a second formula, computes them."""

import numpy as np
import pytest

from minidl import autodiff, losses, ops
from minidl.autodiff import Tensor
from minidl.backends.numpy_backend import NumpyBackend

from _numeric import central_differences

F64 = NumpyBackend("float64")


def _case(name, rng, shape):
    """(loss, y_true, y_pred) away from kinks and clips (finite differences need that)."""
    logits = rng.normal(size=shape)
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    labels = rng.integers(0, shape[-1], shape[:-1])
    onehot = np.eye(shape[-1])[labels]
    binary = (rng.random(shape) > 0.5).astype(float)
    positive = np.abs(rng.normal(size=shape)) + 0.2
    table = {
        "cce": (losses.CategoricalCrossentropy(), onehot, probs),
        "cce_logits": (losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1), onehot, logits),
        "scce": (losses.SparseCategoricalCrossentropy(), labels, probs),
        "scce_logits": (losses.SparseCategoricalCrossentropy(from_logits=True), labels, logits),
        "bce": (losses.BinaryCrossentropy(label_smoothing=0.2), binary, 1 / (1 + np.exp(-logits))),
        "bce_logits": (losses.BinaryCrossentropy(from_logits=True), binary, logits),
        "mse": (losses.MeanSquaredError(), rng.normal(size=shape), logits),
        "mae": (losses.MeanAbsoluteError(), rng.normal(size=shape), logits),
        "huber": (losses.Huber(delta=0.7), rng.normal(size=shape), logits),
        "log_cosh": (losses.LogCosh(), rng.normal(size=shape), logits),
        "poisson": (losses.Poisson(), np.abs(rng.normal(size=shape)), positive),
        "kl_divergence": (losses.KLDivergence(), rng.uniform(0.05, 0.95, shape), rng.uniform(0.05, 0.95, shape)),
        "hinge": (losses.Hinge(), binary, logits),
        "squared_hinge": (losses.SquaredHinge(), binary, logits),
        "categorical_hinge": (losses.CategoricalHinge(), onehot, logits),
        "cosine_similarity": (losses.CosineSimilarity(), rng.normal(size=shape), logits),
    }
    return table[name]


NAMES = ["cce", "cce_logits", "scce", "scce_logits", "bce", "bce_logits", "mse", "mae", "huber", "log_cosh",
         "poisson", "kl_divergence", "hinge", "squared_hinge", "categorical_hinge", "cosine_similarity"]


def _value_and_grad(backend, loss, y_true, y_pred, weights=None):
    """The loss (times per-sample weights when given, then summed) and its gradient with
    respect to y_pred, through a tape on `backend`."""
    with autodiff.on_backend(backend):
        tape = autodiff.Tape(backend)
        pred = Tensor(backend.from_numpy(np.asarray(y_pred, np.float64 if backend is F64 else np.float32)),
                      backend, requires_grad=True)
        with autodiff.recording(tape):
            if weights is None:
                value = loss(y_true, pred)
            else:
                value = ops.sum(loss._values(y_true, pred) * ops.convert_to_tensor(weights, backend=backend))
        (grad,) = tape.gradients([value], [ops.ones((), backend=backend)], [pred])
    return float(value.numpy()), grad.numpy()


@pytest.mark.parametrize("name", NAMES)
def test_gradient_of_a_direct_call_float64(name):
    rng = np.random.default_rng(0)
    loss, y_true, y_pred = _case(name, rng, (2, 3, 4))       # rank 3: scored per position
    weights = rng.uniform(0.5, 2.0, size=(2, 3))
    _, grad = _value_and_grad(F64, loss, y_true, y_pred, weights)
    pred = np.array(y_pred, np.float64)
    numeric = central_differences(lambda: _value_and_grad(F64, loss, y_true, pred, weights)[0], pred)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)
    assert np.abs(grad).max() > 0


@pytest.mark.parametrize("name", NAMES)
def test_direct_call_on_every_backend_matches_float64(backend, name):
    rng = np.random.default_rng(1)
    loss, y_true, y_pred = _case(name, rng, (6, 5))
    want_value, want_grad = _value_and_grad(F64, loss, y_true, y_pred)
    value, grad = _value_and_grad(backend, loss, y_true, y_pred)
    assert value == pytest.approx(want_value, rel=2e-5, abs=1e-6)
    np.testing.assert_allclose(grad, want_grad, rtol=2e-4, atol=2e-6)


def test_cross_entropies_match_the_ops_composed_form():
    """The kernel op and minidl.ops's composed cross-entropies (Keras's ops API) agree."""
    rng = np.random.default_rng(2)
    for name, composed in (("cce", lambda t, p: ops.categorical_crossentropy(t, p)),
                           ("cce_logits", None),
                           ("bce_logits", lambda t, p: ops.mean(ops.binary_crossentropy(t, p, from_logits=True), -1))):
        loss, y_true, y_pred = _case(name, rng, (4, 3))
        if composed is None:
            smoothed = y_true * 0.9 + 0.1 / 3
            composed = lambda t, p, s=smoothed: ops.categorical_crossentropy(s, p, from_logits=True)  # noqa: E731
        with autodiff.on_backend(F64):
            want = ops.convert_to_numpy(composed(ops.convert_to_tensor(y_true), Tensor(np.asarray(y_pred), F64)))
            got = ops.convert_to_numpy(loss._values(y_true, Tensor(np.asarray(y_pred), F64)))
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_the_kernel_computes_a_direct_call(monkeypatch):
    backend = NumpyBackend()
    ran = []
    for op in ("softmax_cross_entropy_forward", "softmax_cross_entropy_backward", "row_loss_forward",
               "row_loss_backward"):
        kernel = getattr(backend, op)
        monkeypatch.setattr(backend, op, lambda *a, _k=kernel, _op=op, **kw: (ran.append(_op), _k(*a, **kw))[1])
    rng = np.random.default_rng(3)
    for name in ("scce_logits", "huber"):
        loss, y_true, y_pred = _case(name, rng, (4, 3))
        _value_and_grad(backend, loss, y_true, y_pred)
    with autodiff.on_backend(backend):
        losses.log_cosh(np.zeros((2, 3)), np.ones((2, 3)))
    assert ran == ["softmax_cross_entropy_forward", "softmax_cross_entropy_backward", "row_loss_forward",
                   "row_loss_backward", "row_loss_forward"]


def test_function_forms_take_another_axis_and_mask_ignore_class():
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(3, 4, 2)).astype(np.float32)
    labels = np.eye(4, dtype=np.float32)[rng.integers(0, 4, (3, 2))]      # (3, 2, 4)
    along_1 = losses.categorical_crossentropy(np.moveaxis(labels, -1, 1), logits, from_logits=True, axis=1)
    last = losses.categorical_crossentropy(labels, np.moveaxis(logits, 1, -1), from_logits=True)
    np.testing.assert_allclose(np.asarray(along_1), np.asarray(last), rtol=1e-6)
    sparse = np.array([0, 2, 1])
    masked = losses.sparse_categorical_crossentropy(sparse, logits[:, :, 0], from_logits=True, ignore_class=2)
    full = losses.sparse_categorical_crossentropy(sparse, logits[:, :, 0], from_logits=True)
    np.testing.assert_allclose(np.asarray(masked), np.asarray(full) * [1, 0, 1], rtol=1e-6)
    with pytest.raises(ValueError, match="y_true of shape"):
        losses.MeanAbsoluteError()(np.zeros((2, 3)), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="class labels of shape"):
        losses.SparseCategoricalCrossentropy()(np.zeros((2, 3)), np.zeros((2, 4)))
