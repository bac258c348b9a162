"""NaN and +-inf through the cpu backend's C kernels, on every ISA path, against numpy.

Tests taking `isa` (tests/conftest.py) run on each ISA path. IEEE arithmetic and the numpy
backend propagate NaN; the vector kernels once hid it (clamps
written with max / min, which drop a NaN operand on x86; a max-pool comparison a NaN never
passes). Each test puts NaN and infinities both in whole vectors and in the vector tail
(37 = 2 * 16 + 5 elements per row) and compares with numpy, NaN for NaN. The metric tests
check the rule both backends follow where IEEE comparisons alone would decide otherwise: a NaN
prediction never counts as correct.
"""

import numpy as np
import pytest

from minidl.backends.base import make_window
from minidl.backends.cpu import create
from minidl.backends.numpy_backend import NumpyBackend

NAN, INF = np.float32(np.nan), np.float32(np.inf)

cpu = create()
ref = NumpyBackend()


@pytest.fixture(autouse=True)
def quiet_numpy():
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        yield


def same(actual, expected, rtol=1e-5, atol=1e-6):
    """Equal up to rounding, NaN exactly where numpy has NaN, infinities where it has them."""
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def specials(rows=4, cols=37, seed=0):
    """(rows, cols) float32 normals with NaN, +inf and -inf in the vector body and the tail."""
    x = np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)
    x[0, 3], x[0, cols - 2] = NAN, NAN
    x[1, 20] = INF
    x[2, cols - 1] = -INF
    return x


def both(op, *arrays, **kwargs):
    """Run backend op on cpu and numpy with fresh copies of `arrays`; returns both results."""
    results = []
    for backend in (cpu, ref):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
        getattr(backend, op)(*copies, **kwargs)
        results.append(copies)
    return results


# ------------------------------------------------------------------ activations

@pytest.mark.parametrize("name", ["linear", "relu", "leaky_relu", "sigmoid", "tanh", "softmax"])
def test_activation_forward_propagates_nan(isa, name):
    x = specials()
    got, want = both("activation_forward", np.zeros_like(x), x, name, alpha=0.1)
    same(got[0], want[0])
    assert np.isnan(got[0][0, 3])       # sigmoid(NaN) and tanh(NaN) were 1 on avx2 / avx512


def test_softmax_of_a_row_with_nan_is_nan_not_uniform(isa):
    x = np.zeros((2, 37), np.float32)
    x[0, 5] = NAN
    out = np.empty_like(x)
    cpu.activation_forward(out, x, "softmax")
    assert np.isnan(out[0]).all()
    same(out[1], np.full(37, 1 / 37, np.float32))


@pytest.mark.parametrize("name", ["relu", "leaky_relu", "sigmoid", "tanh", "softmax"])
def test_activation_backward_propagates_nan(isa, name):
    y, dout = specials(seed=1), specials(seed=2)
    y[3, 7] = NAN                        # NaN in y where dout is finite
    got, want = both("activation_backward", np.zeros_like(y), dout, y, name, alpha=0.1)
    same(got[0], want[0])


# ------------------------------------------------------------------ losses

@pytest.mark.parametrize("sparse", [True, False])
def test_softmax_cross_entropy_with_nan_and_inf_logits(isa, sparse):
    logits = specials()
    targets = np.array([1, 20, 36, 0], np.int32)
    if not sparse:
        targets = np.eye(37, dtype=np.float32)[targets]
    n = logits.shape[0]
    got, want = both("softmax_cross_entropy_forward", np.zeros_like(logits), np.zeros(n, np.float32),
                     logits, targets)
    same(got[0], want[0])
    same(got[1], want[1])
    assert np.isnan(got[1][0])           # was finite: the NaN row came out uniform
    got, want = both("softmax_cross_entropy_backward", np.zeros_like(logits), want[0], targets, 0.5)
    same(got[0], want[0])


def test_sigmoid_cross_entropy_with_nan_and_inf_logits(isa):
    logits, targets = specials(), (np.random.default_rng(3).random((4, 37)) > 0.5).astype(np.float32)
    got, want = both("sigmoid_cross_entropy_forward", np.zeros_like(logits), np.zeros(4, np.float32),
                     logits, targets)
    same(got[0], want[0])
    same(got[1], want[1])
    got, want = both("sigmoid_cross_entropy_backward", np.zeros_like(logits), want[0], targets, 1.0)
    same(got[0], want[0])


@pytest.mark.parametrize("binary", [True, False])
def test_cross_entropy_of_nan_probabilities(isa, binary):
    probs = np.random.default_rng(4).random((4, 37)).astype(np.float32)
    probs[0, 3], probs[1, 36] = NAN, NAN
    targets = np.eye(37, dtype=np.float32)[[3, 36, 0, 1]]
    got, want = both("cross_entropy_forward", np.zeros(4, np.float32), probs, targets, binary)
    same(got[0], want[0])
    got, want = both("cross_entropy_backward", np.zeros_like(probs), probs, targets, binary, 1.0)
    same(got[0], want[0])


def test_mean_squared_error_with_nan(isa):
    pred, targets = specials(), specials(seed=5)
    got, want = both("mean_squared_error_forward", np.zeros(4, np.float32), pred, targets)
    same(got[0], want[0])


# ------------------------------------------------------------------ max pooling

@pytest.mark.parametrize("c", [5, 37])
def test_max_pool_returns_nan_and_its_first_index(isa, c):
    rng = np.random.default_rng(c)
    x = rng.standard_normal((2, 6, 6, c)).astype(np.float32)
    x[0, 0, 1, :] = NAN                  # window (0, 0): NaN after a number
    x[0, 1, 0, :] = NAN                  # ... and a second NaN later in the same window
    x[0, 2, 2, 0], x[0, 3, 3, 0] = INF, NAN   # +inf before a NaN
    x[1, 4:, 4:, :] = -INF               # a window of -inf only
    plan = make_window(x.shape, (2, 2), (2, 2), "valid")
    got, want = both("max_pool2d_forward", np.zeros(plan.out_shape, np.float32),
                     np.zeros(plan.out_shape, np.int32), x, plan)
    same(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert np.isnan(got[0][0, 0, 0]).all() and (got[1][0, 0, 0] == 1).all()
    dout = rng.standard_normal(plan.out_shape).astype(np.float32)
    got, want = both("max_pool2d_backward", np.zeros_like(x), dout, want[1], plan)
    same(got[0], want[0])


def test_max_pool_with_padding_and_nan(isa):
    x = np.random.default_rng(7).standard_normal((1, 5, 5, 37)).astype(np.float32)
    x[0, 0, 0, :] = NAN
    x[0, 4, 4, 36] = NAN
    plan = make_window(x.shape, (3, 3), (2, 2), "same")
    got, want = both("max_pool2d_forward", np.zeros(plan.out_shape, np.float32),
                     np.zeros(plan.out_shape, np.int32), x, plan)
    same(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


# ------------------------------------------------------------------ batchnorm

def test_batchnorm_with_nan_in_one_channel(isa):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((50, 37)).astype(np.float32)
    x[10, 3], x[20, 36] = NAN, INF
    c = x.shape[1]
    gamma, beta = rng.random(c).astype(np.float32), rng.random(c).astype(np.float32)
    args = (np.zeros_like(x), np.zeros(c, np.float32), np.zeros(c, np.float32), x, gamma, beta,
            np.zeros(c, np.float32), np.ones(c, np.float32), 0.9, 1e-3)
    got, want = both("batchnorm_forward_train", *args)
    for g, w in zip(got, want):
        if isinstance(g, np.ndarray):
            same(g, w, rtol=1e-4, atol=1e-5)
    mean, invstd = want[1], want[2]
    dout = rng.standard_normal(x.shape).astype(np.float32)
    got, want = both("batchnorm_backward", np.zeros_like(x), np.zeros(c, np.float32),
                     np.zeros(c, np.float32), dout, x, mean, invstd, gamma)
    for g, w in zip(got[:3], want[:3]):
        same(g, w, rtol=1e-4, atol=1e-4)
    moving_var = np.ones(c, np.float32)
    moving_var[5] = NAN
    got, want = both("batchnorm_forward_infer", np.zeros_like(x), x, gamma, beta,
                     np.zeros(c, np.float32), moving_var, 1e-3)
    same(got[0], want[0], rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------ optimizers, clipping

@pytest.mark.parametrize("n", [37, 70001])
def test_clip_by_value_and_norm_keep_nan(isa, n):
    g = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    g[3], g[n - 1], g[n - 2], g[n - 3] = NAN, NAN, INF, -INF
    got, want = both("clip_by_value", g, 0.5)
    same(got[0], want[0])
    got, want = both("clip_by_norm", g, 1.0)
    same(got[0], want[0])


@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
def test_optimizer_updates_with_nan_and_inf(isa, weight_decay):
    """NaN / inf in g and in w; with weight decay numpy's w -= lr * wd * w makes an infinite w NaN."""
    rng = np.random.default_rng(9)
    w, g = rng.standard_normal(37).astype(np.float32), rng.standard_normal(37).astype(np.float32)
    g[4], g[35] = NAN, INF
    w[7], w[20], w[36] = INF, -INF, NAN
    state = lambda: np.abs(rng.standard_normal(37)).astype(np.float32)  # noqa: E731
    updates = [("adam_update", (w, g, state(), state(), 1e-3, 0.9, 0.999, 1e-7, 3, weight_decay)),
               ("sgd_update", (w, g, None, 0.1, 0.0, False, weight_decay)),
               ("sgd_update", (w, g, state(), 0.05, 0.9, True, weight_decay)),
               ("rmsprop_update", (w, g, state(), state(), 1e-3, 0.9, 0.5, 1e-7, weight_decay)),
               ("adagrad_update", (w, g, state(), 0.01, 1e-7, weight_decay))]
    for op, args in updates:
        got, want = both(op, *args)
        for a, b in zip(got, want):
            if isinstance(a, np.ndarray):
                same(a, b)


# ------------------------------------------------------------------ metrics

@pytest.mark.parametrize("n", [1, 16, 37, 70001])
def test_all_finite_sees_nan_and_inf_anywhere(isa, n):
    out = np.zeros(1, np.float32)
    for position in sorted({0, n // 2, n - 1}):
        for bad in (NAN, INF, -INF):
            x = np.ones(n, np.float32)
            x[position] = bad
            cpu.all_finite(out, x)
            assert out[0] == 0.0, (position, bad)
    cpu.all_finite(out, np.ones(n, np.float32))
    assert out[0] == 1.0


def test_sum_propagates_nan(isa):
    x = np.ones(37, np.float32)
    x[36] = NAN
    out = np.zeros(1, np.float32)
    cpu.sum(out, x)
    assert np.isnan(out[0])


@pytest.mark.parametrize("backend", [cpu, ref], ids=["cpu", "numpy"])
def test_nan_predictions_never_count_as_correct(isa, backend):
    pred = np.zeros((5, 37), np.float32)
    labels = np.array([0, 3, 36, 10, 20], np.int32)
    pred[np.arange(5), labels] = 1.0     # every row right ...
    pred[0, 0] = NAN                     # ... but row 0's target score is NaN
    pred[1, 30] = NAN                    # row 1 has a NaN elsewhere (after the target)
    pred[2, 2] = NAN                     # row 2: a NaN before the target
    out = np.zeros(1, np.float32)
    backend.categorical_accuracy(out, pred, labels)
    assert out[0] == 2.0
    backend.categorical_accuracy(out, pred, np.eye(37, dtype=np.float32)[labels])
    assert out[0] == 2.0
    backend.top_k_accuracy(out, pred, labels, 5)      # the target ranks first in every row
    assert out[0] == 2.0
    backend.top_k_accuracy(out, pred, np.eye(37, dtype=np.float32)[labels], 1)
    assert out[0] == 2.0
    binary_pred = np.array([NAN, NAN, 0.9, 0.1] * 10, np.float32)
    binary_targets = np.array([0.0, 1.0, 1.0, 0.0] * 10, np.float32)
    backend.binary_accuracy(out, binary_pred, binary_targets)
    assert out[0] == 20.0                # a NaN is neither above nor below 0.5: never right
