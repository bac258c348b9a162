"""NaN and infinities on the opencl backend: every kernel propagates them as the numpy backend
(IEEE arithmetic) does. OpenCL's fmax, fmin and clamp drop a NaN operand, so relu(NaN) was 0,
a clipped NaN finite and a NaN never won a max-pooling window; these are the regressions.
Metrics never count a prediction row that holds a NaN as correct.
"""

import numpy as np
import pytest

pytest.importorskip("pyopencl", reason="pyopencl is not installed (pip install pyopencl)")

from minidl.backends.base import BackendUnavailable  # noqa: E402
from minidl.backends.numpy_backend import NumpyBackend  # noqa: E402

# the numpy reference warns about the invalid operations these tests make on purpose
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
NAN, INF = np.float32(np.nan), np.float32(np.inf)


@pytest.fixture(scope="module")
def cl():
    from minidl.backends.opencl import create
    try:
        return create()
    except BackendUnavailable as exc:
        pytest.skip(f"no OpenCL platform here: {exc}")


NP = NumpyBackend()


def special(shape, seed=0):
    """Random normals with a NaN, +inf and -inf spread over them (and one of each in row 0)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32).reshape(-1)
    x[:3] = NAN, INF, -INF
    picks = rng.choice(np.arange(3, x.size), size=min(6, x.size - 3), replace=False)
    x[picks] = np.resize([NAN, INF, -INF], picks.size)
    return x.reshape(shape)


def on_both(cl, op, *args, **kwargs):
    """Run backend op `op` on opencl and on numpy with copies of the numpy arrays in args; return
    ([opencl arrays], [numpy arrays]): every array argument after the call, in argument order."""
    def run(backend):
        tensors = [backend.from_numpy(a.copy(), dtype=a.dtype) if isinstance(a, np.ndarray) else a
                   for a in args]
        getattr(backend, op)(*tensors, **kwargs)
        return [backend.to_numpy(t) for t, a in zip(tensors, args) if isinstance(a, np.ndarray)]
    return run(cl), run(NP)


def assert_same(cl, op, *args, **kwargs):
    """opencl and numpy agree on op(*args): NaN where numpy has NaN, the same infinities."""
    got, expected = on_both(cl, op, *args, **kwargs)
    for index, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, equal_nan=True,
                                   err_msg=f"{op}: array argument {index}")


@pytest.mark.parametrize("name", ["linear", "relu", "leaky_relu", "sigmoid", "tanh", "softmax"])
def test_activations_propagate_nan(cl, name):
    x = special((6, 7))
    assert_same(cl, "activation_forward", np.empty_like(x), x, name, alpha=0.2)
    # y may hold NaN too (the forward output of a NaN)
    assert_same(cl, "activation_backward", np.empty_like(x), special((6, 7), 1),
                np.where(np.isnan(x), x, 0.5).astype(np.float32), name, alpha=0.2)


def test_relu_of_nan_is_nan(cl):
    got, _ = on_both(cl, "activation_forward", np.zeros(3, np.float32),
                     np.array([NAN, -1.0, 2.0], np.float32), "relu")
    assert np.isnan(got[0][0]) and list(got[0][1:]) == [0.0, 2.0]


def test_clip_by_value_keeps_nan(cl):
    g = special((50,))
    got, _ = on_both(cl, "clip_by_value", g, 0.5)
    assert np.array_equal(np.isnan(got[0]), np.isnan(g))
    assert_same(cl, "clip_by_value", g, 0.5)


@pytest.mark.parametrize("poison", [NAN, INF])
def test_clip_by_norm_of_a_non_finite_gradient(cl, poison):
    g = np.linspace(-1, 1, 40).astype(np.float32)
    g[7] = poison
    assert_same(cl, "clip_by_norm", g, 1.0)


def pool_input():
    x = np.random.default_rng(3).standard_normal((2, 5, 5, 3)).astype(np.float32)
    x[0, 0, 1, 0] = NAN        # a NaN after the window's first element
    x[0, 3, 3, 1] = NAN
    x[1, 2, 2, 2] = INF
    x[1, 4, 4, 0] = -INF
    x[1, 0:2, 0:2, 1] = -INF   # a window of -inf only
    return x


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_max_pooling_lets_nan_win(cl, padding):
    x = pool_input()
    plans = [be.pool2d_plan(x.shape, (2, 2), (2, 2), padding) for be in (cl, NP)]
    outs = []
    for backend, plan in zip((cl, NP), plans):
        out, argmax = backend.empty(plan.out_shape), backend.empty(plan.out_shape, "int32")
        backend.max_pool2d_forward(out, argmax, backend.from_numpy(x), plan)
        dx = backend.empty(x.shape)
        backend.max_pool2d_backward(dx, backend.from_numpy(np.ones(plan.out_shape, np.float32)),
                                    argmax, plan)
        outs.append((backend.to_numpy(out), backend.to_numpy(dx)))
    (out, dx), (out_np, dx_np) = outs
    assert np.isnan(out[0, 0, 0, 0])
    np.testing.assert_array_equal(out, out_np)   # NaN == NaN for assert_array_equal
    np.testing.assert_array_equal(dx, dx_np)     # the gradient goes to the NaN that won


def test_average_pooling_propagates(cl):
    x = pool_input()
    plan = cl.pool2d_plan(x.shape, (3, 3), (2, 2), "same")
    assert_same(cl, "avg_pool2d_forward", np.empty(plan.out_shape, np.float32), x, plan)
    assert_same(cl, "global_avg_pool_forward", np.empty((2, 3), np.float32), x)


@pytest.mark.parametrize("sparse", [True, False])
def test_softmax_cross_entropy(cl, sparse):
    logits = special((8, 5))
    logits[5] = [1, 2, -INF, 0, 3]   # a -inf logit alone gives finite probabilities and loss
    labels = np.array([0, 1, 2, 3, 4, 2, 1, 0], np.int32)
    targets = labels if sparse else np.eye(5, dtype=np.float32)[labels]
    assert_same(cl, "softmax_cross_entropy_forward", np.empty_like(logits), np.empty(8, np.float32),
                logits, targets)
    probs = np.empty_like(logits)
    NP.softmax_cross_entropy_forward(probs, np.empty(8, np.float32), logits, targets)
    assert_same(cl, "softmax_cross_entropy_backward", np.empty_like(logits), probs, targets, 0.5)


def test_sigmoid_cross_entropy(cl):
    logits = special((6, 4))
    targets = (np.random.default_rng(2).random((6, 4)) > 0.5).astype(np.float32)
    assert_same(cl, "sigmoid_cross_entropy_forward", np.empty_like(logits),
                np.empty(6, np.float32), logits, targets)


def probabilities():
    p = np.random.default_rng(4).random((6, 4)).astype(np.float32)
    p[0, 0], p[1, 2], p[2, 1], p[3, 3] = NAN, INF, -INF, NAN
    return p


@pytest.mark.parametrize("kind", ["sparse", "dense", "binary"])
def test_cross_entropy_of_probabilities(cl, kind):
    probs = probabilities()
    labels = np.array([0, 2, 1, 0, 3, 1], np.int32)
    targets = {"sparse": labels, "dense": np.eye(4, dtype=np.float32)[labels],
               "binary": (probs > 0.5).astype(np.float32)}[kind]
    binary = kind == "binary"
    got, _ = on_both(cl, "cross_entropy_forward", np.empty(6, np.float32), probs, targets, binary)
    assert np.isnan(got[0][0])   # the clip to [1e-7, 1 - 1e-7] must not make a NaN finite
    assert_same(cl, "cross_entropy_forward", np.empty(6, np.float32), probs, targets, binary)
    assert_same(cl, "cross_entropy_backward", np.empty_like(probs), probs, targets, binary, 0.25)


def test_mean_squared_error(cl):
    pred, targets = special((5, 3)), special((5, 3), 1)
    assert_same(cl, "mean_squared_error_forward", np.empty(5, np.float32), pred, targets)


def test_batchnorm_with_a_nan_in_one_channel(cl):
    x = np.random.default_rng(5).standard_normal((9, 4)).astype(np.float32)
    x[3, 1], x[6, 2] = NAN, INF
    c = np.ones(4, np.float32)
    out, mean, invstd = np.empty_like(x), np.empty(4, np.float32), np.empty(4, np.float32)
    assert_same(cl, "batchnorm_forward_train", out, mean, invstd, x, c, 0 * c, 0 * c, c, 0.9, 1e-3)
    assert_same(cl, "batchnorm_forward_infer", out, x, c, 0 * c, 0 * c, c, 1e-3)


def test_sum_and_all_finite(cl):
    for x in (special((300,)), np.array([1.0, INF], np.float32), np.array([-INF, 2], np.float32)):
        assert_same(cl, "sum", np.zeros(1, np.float32), x)
        assert_same(cl, "all_finite", np.zeros(1, np.float32), x)


@pytest.mark.parametrize("op,state", [("sgd_update", 1), ("adam_update", 2), ("adagrad_update", 1)])
def test_optimizer_updates_propagate(cl, op, state):
    w, g = np.linspace(-1, 1, 20).astype(np.float32), special((20,))
    buffers = [np.zeros(20, np.float32) for _ in range(state)]
    extra = {"sgd_update": (0.1, 0.9, False, 0.0), "adam_update": (1e-3, 0.9, 0.999, 1e-7, 1, 0.0),
             "adagrad_update": (0.1, 1e-7, 0.0)}[op]
    assert_same(cl, op, w, g, *buffers, *extra)


def test_gemm_and_convolutions_propagate(cl):
    a, b = special((9, 7)), np.random.default_rng(6).standard_normal((7, 40)).astype(np.float32)
    assert_same(cl, "gemm", np.zeros((9, 40), np.float32), a, b)
    x = np.random.default_rng(7).standard_normal((2, 6, 6, 3)).astype(np.float32)
    x[0, 2, 3, 1], x[1, 5, 0, 2] = NAN, INF
    for filters in (4, 16):   # the im2col path and the implicit GEMM
        w = np.random.default_rng(8).standard_normal((3, 3, 3, filters)).astype(np.float32)
        plan_cl = cl.conv2d_plan(x.shape, w.shape, (1, 1), "same")
        out, dout = np.empty(plan_cl.out_shape, np.float32), special(plan_cl.out_shape, 9)
        got, expected = on_both(cl, "conv2d_forward", out, x, w, None, plan_cl)
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-4, atol=1e-4, equal_nan=True)
        got, expected = on_both(cl, "conv2d_backward_filter", np.empty_like(w), None, dout, x,
                                plan_cl)
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-4, atol=1e-4, equal_nan=True)


# --------------------------------------------------------------------------------- metrics
def metric(cl, op, *args):
    out = cl.zeros((1,))
    getattr(cl, op)(out, *[cl.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args])
    return float(cl.to_numpy(out)[0])


def test_a_nan_prediction_is_never_correct(cl):
    # each row's target is where its largest finite score is, or where the NaN is
    pred = np.array([[NAN, 0.1, 0.2], [0.9, 0.1, 0.0], [0.1, NAN, 0.8], [0.2, 0.3, NAN],
                     [INF, 0.0, 1.0]], np.float32)
    labels = np.array([0, 0, 2, 2, 0], np.int32)
    dense = np.eye(3, dtype=np.float32)[labels]
    # only rows 1 and 4 hold no NaN, and their target is their largest score
    assert metric(cl, "categorical_accuracy", pred, labels) == 2.0
    assert metric(cl, "categorical_accuracy", pred, dense) == 2.0
    assert metric(cl, "top_k_accuracy", pred, labels, 1) == 2.0
    assert metric(cl, "top_k_accuracy", pred, dense, 3) == 2.0
    binary_pred = np.array([NAN, NAN, 0.7, 0.2, INF, -INF], np.float32)
    binary_targets = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0], np.float32)
    assert metric(cl, "binary_accuracy", binary_pred, binary_targets) == 4.0


def test_dropout_keeps_nan_on_dropped_units(cl):
    x = special((64,))
    out, mask = cl.empty((64,)), cl.empty((64,))
    cl.dropout_forward(out, mask, cl.from_numpy(x), 0.5, 11)
    np.testing.assert_array_equal(cl.to_numpy(out), x * cl.to_numpy(mask))   # NaN * 0 is NaN
