"""Tests of the numpy reference backend against independent loop implementations,
finite differences in float64 and hand-written formulas. (tests/test_ops.py then compares
every other backend, and this one in float32, with it in float64.)"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minidl.backends import base, numpy_backend
from minidl.backends.numpy_backend import NumpyBackend


@pytest.fixture
def be32():
    return NumpyBackend()


@pytest.fixture
def be64():
    return NumpyBackend(dtype="float64")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def numeric_grad(f, x, eps=1e-6):
    """Central finite differences of the scalar f() w.r.t. x, which f reads in place."""
    grad = np.zeros_like(x)
    flat, flat_grad = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        saved = flat[i]
        flat[i] = saved + eps
        up = f()
        flat[i] = saved - eps
        down = f()
        flat[i] = saved
        flat_grad[i] = (up - down) / (2 * eps)
    return grad


# ---------------------------------------------------------------- independent references
def tf_padding(size, kernel, stride, padding):
    """(before, out) along one axis, written from TensorFlow's documentation."""
    if padding == "valid":
        return 0, (size - kernel) // stride + 1
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, out


def window_positions(h, w, kh, kw, sh, sw, padding):
    """For each output pixel (i, j): the list of (flat window index, row, col) inside the image."""
    top, oh = tf_padding(h, kh, sh, padding)
    left, ow = tf_padding(w, kw, sw, padding)
    positions = {}
    for i in range(oh):
        for j in range(ow):
            cells = []
            for di in range(kh):
                for dj in range(kw):
                    r, q = i * sh + di - top, j * sw + dj - left
                    if 0 <= r < h and 0 <= q < w:
                        cells.append((di * kw + dj, r, q))
            positions[i, j] = cells
    return positions, oh, ow


def conv_reference(x, weight, bias, strides, padding):
    n, h, w, _ = x.shape
    kh, kw, _, f = weight.shape
    positions, oh, ow = window_positions(h, w, kh, kw, *strides, padding)
    out = np.zeros((n, oh, ow, f))
    for (i, j), cells in positions.items():
        for index, r, q in cells:
            out[:, i, j, :] += x[:, r, q, :] @ weight[index // kw, index % kw]
    if bias is not None:
        out += bias
    return out


def max_pool_reference(x, dout, pool, strides, padding):
    """(out, dx): the maximum of each window and dout routed to its first maximum."""
    n, h, w, c = x.shape
    positions, oh, ow = window_positions(h, w, *pool, *strides, padding)
    out = np.zeros((n, oh, ow, c))
    dx = np.zeros(x.shape)
    for b in range(n):
        for ch in range(c):
            for (i, j), cells in positions.items():
                values = [x[b, r, q, ch] for _, r, q in cells]
                best = int(np.argmax(values))
                out[b, i, j, ch] = values[best]
                _, r, q = cells[best]
                dx[b, r, q, ch] += dout[b, i, j, ch]
    return out, dx


def avg_pool_reference(x, pool, strides, padding):
    n, h, w, c = x.shape
    positions, oh, ow = window_positions(h, w, *pool, *strides, padding)
    out = np.zeros((n, oh, ow, c))
    for (i, j), cells in positions.items():
        out[:, i, j, :] = np.mean([x[:, r, q, :] for _, r, q in cells], axis=0)
    return out


# ------------------------------------------------------------------------------- memory
def test_create_and_registry():
    backend = numpy_backend.create()
    assert isinstance(backend, NumpyBackend) and backend.name == "numpy"
    assert backend.info() == {"name": "numpy", "dtype": "float32"}
    assert NumpyBackend("float64").info()["dtype"] == "float64"
    assert backend.stats() == {"h2d_count": 0, "h2d_bytes": 0, "d2h_count": 0, "d2h_bytes": 0}
    with pytest.raises(ValueError, match="dtype"):
        NumpyBackend("float16")


def test_every_contract_op_is_implemented_with_its_signature():
    import inspect
    for name, contract in inspect.getmembers(base.Backend, inspect.isfunction):
        mine = getattr(NumpyBackend, name)
        assert inspect.signature(mine) == inspect.signature(contract), name
        if "NotImplementedError" in inspect.getsource(contract):
            assert mine is not contract, f"{name} is not implemented"


def test_allocation_dtypes(be32, be64):
    assert be32.empty((2, 3)).dtype == np.float32
    assert be64.empty((2, 3)).dtype == np.float64
    assert be64.zeros((2, 3), dtype="float32").dtype == np.float64
    assert be64.zeros((4,), dtype="int32").dtype == np.int32
    assert not be32.zeros((3, 2)).any()
    with pytest.raises(ValueError, match="empty"):
        be32.empty((2,), dtype="complex64")


def test_host_transfers_copy(be32):
    source = np.arange(6, dtype=np.float64).reshape(2, 3)
    tensor = be32.from_numpy(source)
    source[0, 0] = 99
    assert tensor.dtype == np.float32 and tensor[0, 0] == 0
    assert be32.from_numpy(np.array([1, 2], dtype=np.int64)).dtype == np.int32
    host = be32.to_numpy(tensor)
    host[0, 1] = 42
    assert tensor[0, 1] == 1
    out = be32.empty((3, 2))
    be32.copy_from_host(out, np.arange(6))
    np.testing.assert_array_equal(out.ravel(), np.arange(6))
    with pytest.raises(ValueError, match="copy_from_host"):
        be32.copy_from_host(out, np.zeros(5))


def test_reshape_is_a_view_and_copy_fill(be32):
    x = be32.from_numpy(np.arange(12))
    view = be32.reshape(x, (3, 4))
    view[0, 0] = -1
    assert x[0] == -1 and be32.shape(view) == (3, 4)
    with pytest.raises(ValueError, match="reshape"):
        be32.reshape(x, (5, 2))
    out = be32.empty((4, 3))
    be32.copy(out, view)
    np.testing.assert_array_equal(out.ravel(), x)
    be32.fill(out, 2.5)
    assert (out == 2.5).all()


# -------------------------------------------------------------------------- elementwise
def test_elementwise_with_aliasing(be64, rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    out = be64.empty((3, 4))
    be64.add(out, a, b)
    np.testing.assert_allclose(out, a + b)
    be64.multiply(out, a, b)
    np.testing.assert_allclose(out, a * b)
    x, y = a.copy(), b.copy()
    be64.axpby(y, 2.0, x, -3.0, y)              # out aliases y
    np.testing.assert_allclose(y, 2 * a - 3 * b)
    x = a.copy()
    be64.axpby(x, 0.5, x, 4.0, b)               # out aliases x
    np.testing.assert_allclose(x, 0.5 * a + 4 * b)
    with pytest.raises(ValueError, match="add: b"):
        be64.add(out, a, b[:, :3])


def test_bias_add_and_grad(be64, rng):
    x = rng.standard_normal((2, 3, 3, 5))
    bias = rng.standard_normal(5)
    out = be64.empty(x.shape)
    be64.bias_add(out, x, bias)
    np.testing.assert_allclose(out, x + bias)
    dbias = be64.empty((5,))
    be64.bias_grad(dbias, x)
    np.testing.assert_allclose(dbias, [x[..., c].sum() for c in range(5)])


# -------------------------------------------------------------------------- activations
ACTIVATIONS = ["linear", "relu", "leaky_relu", "sigmoid", "tanh", "softmax"]


def activation_reference(name, x, alpha):
    if name == "linear":
        return x
    if name == "relu":
        return np.array([[max(v, 0.0) for v in row] for row in x])
    if name == "leaky_relu":
        return np.array([[v if v > 0 else alpha * v for v in row] for row in x])
    if name == "sigmoid":
        return np.array([[1 / (1 + math.exp(-v)) for v in row] for row in x])
    if name == "tanh":
        return np.array([[math.tanh(v) for v in row] for row in x])
    return np.array([[math.exp(v) / sum(math.exp(u) for u in row) for v in row] for row in x])


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_forward(be64, rng, name):
    x = rng.standard_normal((4, 5)) * 3
    out = be64.empty(x.shape)
    be64.activation_forward(out, x, name, alpha=0.2)
    np.testing.assert_allclose(out, activation_reference(name, x, 0.2), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_backward_finite_differences(be64, rng, name):
    # keep |x| away from 0 so relu's kink does not spoil the finite differences
    x = rng.uniform(0.1, 2.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
    g = rng.standard_normal(x.shape)
    y = be64.empty(x.shape)

    def loss():
        be64.activation_forward(y, x, name, alpha=0.3)
        return float((y * g).sum())

    expected = numeric_grad(loss, x)
    loss()
    dx = g.copy()
    be64.activation_backward(dx, dx, y, name, alpha=0.3)       # dx aliases dout
    np.testing.assert_allclose(dx, expected, rtol=1e-6, atol=1e-8)


def test_activations_stable_for_large_inputs(be32):
    x = np.array([[-1000.0, 0.0, 1000.0]], dtype=np.float32)
    out = be32.empty(x.shape)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        be32.activation_forward(out, x, "sigmoid")
        np.testing.assert_allclose(out, [[0.0, 0.5, 1.0]])
        be32.activation_forward(out, x, "softmax")
        np.testing.assert_allclose(out, [[0.0, 0.0, 1.0]])
    with pytest.raises(ValueError, match="unknown activation 'gelu_fast'"):
        be32.activation_forward(out, x, "gelu_fast")


# --------------------------------------------------------------------------------- gemm
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm(be64, rng, trans_a, trans_b):
    a = rng.standard_normal((5, 3) if trans_a else (3, 5))
    b = rng.standard_normal((4, 5) if trans_b else (5, 4))
    c = rng.standard_normal((3, 4))
    op_a = a.T if trans_a else a
    op_b = b.T if trans_b else b
    reference = np.array([[sum(op_a[i, k] * op_b[k, j] for k in range(5)) for j in range(4)]
                          for i in range(3)])
    out = c.copy()
    be64.gemm(out, a, b, alpha=0.5, beta=2.0, trans_a=trans_a, trans_b=trans_b)
    np.testing.assert_allclose(out, 0.5 * reference + 2 * c)
    out = np.full((3, 4), np.nan)               # beta == 0 never reads out
    be64.gemm(out, a, b, trans_a=trans_a, trans_b=trans_b)
    np.testing.assert_allclose(out, reference)


def test_gemm_shape_error(be32):
    with pytest.raises(ValueError, match="gemm"):
        be32.gemm(be32.empty((2, 2)), be32.zeros((2, 3)), be32.zeros((2, 2)))


# -------------------------------------------------------------------------- convolution
CONV_CASES = [
    # (n, h, w, c, kh, kw, f, strides, padding)
    (2, 5, 5, 2, 3, 3, 3, (1, 1), "same"),
    (2, 6, 6, 2, 2, 2, 3, (1, 1), "same"),      # even kernel: the odd pad pixel goes after
    (1, 7, 5, 3, 3, 2, 2, (2, 1), "same"),      # batch 1, non-square kernel and strides
    (2, 8, 7, 1, 4, 4, 2, (2, 2), "same"),
    (2, 7, 7, 2, 3, 3, 4, (2, 2), "valid"),
    (1, 9, 6, 2, 2, 3, 3, (3, 2), "valid"),     # strides leave rows unused
    (2, 6, 5, 3, 1, 1, 2, (2, 2), "same"),
    (1, 4, 4, 2, 5, 5, 2, (1, 1), "same"),      # kernel larger than the image
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_forward_matches_loops(be64, rng, case):
    n, h, w, c, kh, kw, f, strides, padding = case
    x = rng.standard_normal((n, h, w, c))
    weight = rng.standard_normal((kh, kw, c, f))
    bias = rng.standard_normal(f)
    plan = be64.conv2d_plan(x.shape, weight.shape, strides, padding)
    out = be64.empty(plan.out_shape)
    be64.conv2d_forward(out, x, weight, bias, plan)
    np.testing.assert_allclose(out, conv_reference(x, weight, bias, strides, padding), atol=1e-12)
    be64.conv2d_forward(out, x, weight, None, plan)        # second call reuses the scratch
    np.testing.assert_allclose(out, conv_reference(x, weight, None, strides, padding), atol=1e-12)


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_backward_adjoint_identities(be64, rng, case):
    n, h, w, c, kh, kw, f, strides, padding = case
    x = rng.standard_normal((n, h, w, c))
    weight = rng.standard_normal((kh, kw, c, f))
    plan = be64.conv2d_plan(x.shape, weight.shape, strides, padding)
    out = be64.empty(plan.out_shape)
    be64.conv2d_forward(out, x, weight, None, plan)
    g = rng.standard_normal(plan.out_shape)
    dx = be64.empty(x.shape)
    be64.conv2d_backward_data(dx, g, weight, plan)
    dweight, dbias = be64.empty(weight.shape), be64.empty((f,))
    be64.conv2d_backward_filter(dweight, dbias, g, x, plan)
    # conv is bilinear: <conv(x, w), g> == <x, dx(g, w)> == <w, dw(g, x)>
    inner = float((out * g).sum())
    assert math.isclose(inner, float((x * dx).sum()), rel_tol=1e-10, abs_tol=1e-10)
    assert math.isclose(inner, float((weight * dweight).sum()), rel_tol=1e-10, abs_tol=1e-10)
    np.testing.assert_allclose(dbias, g.sum(axis=(0, 1, 2)))


def test_conv2d_gradients_finite_differences(be64, rng):
    x = rng.standard_normal((1, 5, 4, 2))
    weight = rng.standard_normal((3, 2, 2, 2))
    bias = rng.standard_normal(2)
    plan = be64.conv2d_plan(x.shape, weight.shape, (2, 1), "same")
    out = be64.empty(plan.out_shape)
    g = rng.standard_normal(plan.out_shape)

    def loss():
        be64.conv2d_forward(out, x, weight, bias, plan)
        return float((out * g).sum())

    dx, dweight, dbias = be64.empty(x.shape), be64.empty(weight.shape), be64.empty((2,))
    be64.conv2d_backward_data(dx, g, weight, plan)
    be64.conv2d_backward_filter(dweight, dbias, g, x, plan)
    np.testing.assert_allclose(dx, numeric_grad(loss, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dweight, numeric_grad(loss, weight), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dbias, numeric_grad(loss, bias), rtol=1e-6, atol=1e-8)


def test_conv2d_plan_padding_is_tensorflows():
    plan = base.make_window((1, 5, 6, 1), (4, 2), (1, 2), "same")
    assert (plan.pad_top, plan.pad_bottom, plan.oh) == (1, 2, 5)
    assert (plan.pad_left, plan.pad_right, plan.ow) == (0, 0, 3)


def test_conv2d_shape_errors_name_the_argument(be32):
    plan = be32.conv2d_plan((1, 4, 4, 2), (3, 3, 2, 5), (1, 1), "same")
    with pytest.raises(ValueError, match=r"conv2d_forward: weight must have shape \(3, 3, 2, 5\)"):
        be32.conv2d_forward(be32.empty(plan.out_shape), be32.zeros(plan.in_shape),
                            be32.zeros((3, 3, 2, 4)), None, plan)


window_geometry = st.tuples(
    st.integers(1, 2),                      # n
    st.integers(1, 7), st.integers(1, 7),   # h, w
    st.integers(1, 3),                      # c
    st.integers(1, 4), st.integers(1, 4),   # kh, kw
    st.integers(1, 3), st.integers(1, 3),   # sh, sw
    st.sampled_from(["same", "valid"]),
).filter(lambda g: g[8] == "same" or (g[4] <= g[1] and g[5] <= g[2]))


@settings(max_examples=40, deadline=None)
@given(geometry=window_geometry, seed=st.integers(0, 2 ** 32 - 1))
def test_conv2d_any_geometry_matches_loops(geometry, seed):
    be64 = NumpyBackend("float64")
    rng = np.random.default_rng(seed)
    n, h, w, c, kh, kw, sh, sw, padding = geometry
    x = rng.standard_normal((n, h, w, c))
    weight = rng.standard_normal((kh, kw, c, 2))
    plan = be64.conv2d_plan(x.shape, weight.shape, (sh, sw), padding)
    out = be64.empty(plan.out_shape)
    be64.conv2d_forward(out, x, weight, None, plan)
    np.testing.assert_allclose(out, conv_reference(x, weight, None, (sh, sw), padding), atol=1e-12)
    g = rng.standard_normal(plan.out_shape)
    dx, dweight = be64.empty(x.shape), be64.empty(weight.shape)
    be64.conv2d_backward_data(dx, g, weight, plan)
    be64.conv2d_backward_filter(dweight, None, g, x, plan)
    inner = float((out * g).sum())
    assert math.isclose(inner, float((x * dx).sum()), rel_tol=1e-9, abs_tol=1e-9)
    assert math.isclose(inner, float((weight * dweight).sum()), rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=40, deadline=None)
@given(geometry=window_geometry, seed=st.integers(0, 2 ** 32 - 1))
def test_pooling_any_geometry_matches_loops(geometry, seed):
    be64 = NumpyBackend("float64")
    rng = np.random.default_rng(seed)
    n, h, w, c, kh, kw, sh, sw, padding = geometry
    # rounded values make ties common, exercising the first-maximum rule
    x = np.round(rng.standard_normal((n, h, w, c))) - 3.0
    plan = be64.pool2d_plan(x.shape, (kh, kw), (sh, sw), padding)
    out, argmax = be64.empty(plan.out_shape), be64.empty(plan.out_shape, "int32")
    be64.max_pool2d_forward(out, argmax, x, plan)
    dout = rng.standard_normal(plan.out_shape)
    dx = be64.empty(x.shape)
    be64.max_pool2d_backward(dx, dout, argmax, plan)
    out_ref, dx_ref = max_pool_reference(x, dout, (kh, kw), (sh, sw), padding)
    np.testing.assert_array_equal(out, out_ref)
    np.testing.assert_allclose(dx, dx_ref, atol=1e-12)
    be64.avg_pool2d_forward(out, x, plan)
    np.testing.assert_allclose(out, avg_pool_reference(x, (kh, kw), (sh, sw), padding), atol=1e-12)


# ------------------------------------------------------------------------------ pooling
POOL_CASES = [
    # (n, h, w, c, pool, strides, padding)
    (2, 6, 6, 2, (2, 2), (2, 2), "valid"),
    (1, 5, 5, 3, (2, 2), (2, 2), "same"),
    (2, 5, 7, 2, (3, 3), (2, 2), "same"),
    (1, 7, 6, 2, (3, 2), (1, 2), "same"),       # overlapping, non-square windows
    (2, 4, 4, 1, (3, 3), (1, 1), "same"),
    (1, 7, 7, 2, (3, 3), (2, 2), "valid"),
]


@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool_matches_loops(be64, rng, case):
    n, h, w, c, pool, strides, padding = case
    x = rng.standard_normal((n, h, w, c)) - 5.0       # all negative: zero padding would win
    plan = be64.pool2d_plan(x.shape, pool, strides, padding)
    out, argmax = be64.empty(plan.out_shape), be64.empty(plan.out_shape, "int32")
    be64.max_pool2d_forward(out, argmax, x, plan)
    dout = rng.standard_normal(plan.out_shape)
    dx = be64.empty(x.shape)
    be64.max_pool2d_backward(dx, dout, argmax, plan)
    out_ref, dx_ref = max_pool_reference(x, dout, pool, strides, padding)
    np.testing.assert_array_equal(out, out_ref)
    np.testing.assert_allclose(dx, dx_ref, atol=1e-12)


def test_max_pool_ties_go_to_the_first_position(be64):
    x = np.ones((1, 2, 2, 1))
    plan = be64.pool2d_plan(x.shape, (2, 2), (2, 2), "valid")
    out, argmax = be64.empty(plan.out_shape), be64.empty(plan.out_shape, "int32")
    be64.max_pool2d_forward(out, argmax, x, plan)
    dx = be64.empty(x.shape)
    be64.max_pool2d_backward(dx, np.full((1, 1, 1, 1), 3.0), argmax, plan)
    np.testing.assert_array_equal(dx[0, :, :, 0], [[3.0, 0.0], [0.0, 0.0]])


def test_max_pool_padding_never_wins_even_against_minus_inf(be32):
    x = np.full((1, 4, 4, 1), -np.inf, dtype=np.float32)
    plan = be32.pool2d_plan(x.shape, (3, 3), (1, 1), "same")     # pads (1, 1): padding comes first
    out, argmax = be32.empty(plan.out_shape), be32.empty(plan.out_shape, "int32")
    be32.max_pool2d_forward(out, argmax, x, plan)
    assert np.isneginf(out).all()
    dx = be32.empty(x.shape)
    be32.max_pool2d_backward(dx, np.ones(plan.out_shape, np.float32), argmax, plan)
    assert dx.sum() == out.size                 # every window's gradient landed in the image


def test_max_pool_finite_differences(be64, rng):
    x = rng.standard_normal((1, 5, 4, 2))
    plan = be64.pool2d_plan(x.shape, (3, 2), (2, 2), "same")
    out, argmax = be64.empty(plan.out_shape), be64.empty(plan.out_shape, "int32")
    g = rng.standard_normal(plan.out_shape)

    def loss():
        be64.max_pool2d_forward(out, argmax, x, plan)
        return float((out * g).sum())

    expected = numeric_grad(loss, x)
    loss()
    dx = be64.empty(x.shape)
    be64.max_pool2d_backward(dx, g, argmax, plan)
    np.testing.assert_allclose(dx, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", POOL_CASES)
def test_avg_pool_matches_loops_and_adjoint(be64, rng, case):
    n, h, w, c, pool, strides, padding = case
    x = rng.standard_normal((n, h, w, c))
    plan = be64.pool2d_plan(x.shape, pool, strides, padding)
    out = be64.empty(plan.out_shape)
    be64.avg_pool2d_forward(out, x, plan)
    np.testing.assert_allclose(out, avg_pool_reference(x, pool, strides, padding), atol=1e-12)
    g = rng.standard_normal(plan.out_shape)
    dx = be64.empty(x.shape)
    be64.avg_pool2d_backward(dx, g, plan)
    assert math.isclose(float((out * g).sum()), float((x * dx).sum()), rel_tol=1e-10, abs_tol=1e-12)


def test_global_avg_pool_round_trip(be64, rng):
    x = rng.standard_normal((2, 3, 4, 5))
    out = be64.empty((2, 5))
    be64.global_avg_pool_forward(out, x)
    np.testing.assert_allclose(out, [[x[b, :, :, c].mean() for c in range(5)] for b in range(2)])
    g = rng.standard_normal((2, 5))
    dx = be64.empty(x.shape)
    be64.global_avg_pool_backward(dx, g)
    np.testing.assert_allclose(dx[:, 1, 2, :], g / 12)
    assert math.isclose(float((out * g).sum()), float((x * dx).sum()), rel_tol=1e-12)


def test_pad2d_round_trip(be64, rng):
    x = rng.standard_normal((2, 3, 4, 2))
    pads = (1, 2, 0, 3)
    out = be64.empty((2, 6, 7, 2))
    out.fill(np.nan)                            # the border must be overwritten with zeros
    be64.pad2d_forward(out, x, pads)
    assert out[:, 0].sum() == 0 and out[:, 4:].sum() == 0 and out[:, :, 4:].sum() == 0
    np.testing.assert_array_equal(out[:, 1:4, 0:4, :], x)
    back = be64.empty(x.shape)
    be64.pad2d_backward(back, out, pads)
    np.testing.assert_array_equal(back, x)
    with pytest.raises(ValueError, match="pad2d_forward: out"):
        be64.pad2d_forward(be64.empty((2, 5, 7, 2)), x, pads)


def test_concat_round_trip(be64, rng):
    xs = [rng.standard_normal((2, 3, 3, k)) for k in (1, 4, 2)]
    out = be64.empty((2, 3, 3, 7))
    be64.concat_forward(out, xs)
    np.testing.assert_array_equal(out[..., 1:5], xs[1])
    parts = [be64.empty(x.shape) for x in xs]
    be64.concat_backward(parts, out)
    for part, x in zip(parts, xs):
        np.testing.assert_array_equal(part, x)
    with pytest.raises(ValueError, match="concat_forward"):
        be64.concat_forward(be64.empty((2, 3, 3, 6)), xs)


# ------------------------------------------------------------------------ normalization
def test_batchnorm_forward_and_moving_statistics(be64, rng):
    x = rng.standard_normal((4, 3, 2, 3)) * 2 + 1
    gamma, beta = rng.standard_normal(3), rng.standard_normal(3)
    moving_mean, moving_var = np.full(3, 0.5), np.full(3, 2.0)
    out, mean, invstd = be64.empty(x.shape), be64.empty((3,)), be64.empty((3,))
    be64.batchnorm_forward_train(out, mean, invstd, x, gamma, beta,
                                 moving_mean, moving_var, 0.9, 1e-3)
    for c in range(3):
        values = x[..., c].ravel()
        mu = sum(values) / values.size
        var = sum((v - mu) ** 2 for v in values) / values.size
        np.testing.assert_allclose(out[..., c], gamma[c] * (x[..., c] - mu) / math.sqrt(var + 1e-3)
                                   + beta[c])
        assert math.isclose(moving_mean[c], 0.5 * 0.9 + mu * 0.1)
        assert math.isclose(moving_var[c], 2.0 * 0.9 + var * 0.1)
        assert math.isclose(invstd[c], 1 / math.sqrt(var + 1e-3))
    be64.batchnorm_forward_infer(out, x, gamma, beta, moving_mean, moving_var, 1e-3)
    np.testing.assert_allclose(out, gamma * (x - moving_mean) / np.sqrt(moving_var + 1e-3) + beta)


def test_batchnorm_backward_finite_differences(be64, rng):
    x = rng.standard_normal((5, 2, 3))
    gamma, beta = rng.standard_normal(3), rng.standard_normal(3)
    g = rng.standard_normal(x.shape)
    out, mean, invstd = be64.empty(x.shape), be64.empty((3,)), be64.empty((3,))

    def loss():
        be64.batchnorm_forward_train(out, mean, invstd, x, gamma, beta,
                                     np.zeros(3), np.ones(3), 0.99, 1e-3)
        return float((out * g).sum())

    expected = [numeric_grad(loss, t) for t in (x, gamma, beta)]
    loss()
    dx, dgamma, dbeta = be64.empty(x.shape), be64.empty((3,)), be64.empty((3,))
    be64.batchnorm_backward(dx, dgamma, dbeta, g, x, mean, invstd, gamma)
    for got, want in zip((dx, dgamma, dbeta), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------------------ dropout
def test_dropout_drops_the_same_units_in_float32_and_float64(be32, be64, rng):
    # the mask's own properties (seeded, keep rate, values) are checked on every backend in test_ops.py
    x = rng.standard_normal((64, 50)).astype(np.float32)
    out, mask = be32.empty(x.shape), be32.empty(x.shape)
    be32.dropout_forward(out, mask, x, 0.25, 7)
    out64, mask64 = be64.empty(x.shape), be64.empty(x.shape)
    be64.dropout_forward(out64, mask64, x.astype(np.float64), 0.25, 7)
    np.testing.assert_array_equal(mask64 > 0, mask > 0)
    with pytest.raises(ValueError, match="rate"):
        be32.dropout_forward(out, mask, x, 1.0, 3)


# ------------------------------------------------------------------------------- losses
def softmax_ce_reference(logits, targets_dense):
    out = []
    for row, t in zip(logits, targets_dense):
        log_z = math.log(sum(math.exp(v) for v in row))
        out.append(-sum(tk * (v - log_z) for v, tk in zip(row, t)))
    return np.array(out)


def test_softmax_cross_entropy_sparse_and_dense(be64, rng):
    logits = rng.standard_normal((4, 5)) * 2
    sparse = np.array([0, 4, 2, 2], dtype=np.int32)
    dense = rng.dirichlet(np.ones(5), size=4)
    for targets, targets_dense in ((sparse, np.eye(5)[sparse]), (dense, dense)):
        probs, loss = be64.empty(logits.shape), be64.empty((4,))

        def total():
            be64.softmax_cross_entropy_forward(probs, loss, logits, targets)
            return float(loss.sum() * 0.25)

        expected = numeric_grad(total, logits)
        total()
        np.testing.assert_allclose(loss, softmax_ce_reference(logits, targets_dense))
        np.testing.assert_allclose(probs.sum(axis=1), 1.0)
        dlogits = be64.empty(logits.shape)
        be64.softmax_cross_entropy_backward(dlogits, probs, targets, 0.25)
        np.testing.assert_allclose(dlogits, expected, rtol=1e-6, atol=1e-8)


def test_softmax_cross_entropy_is_stable(be32):
    logits = np.array([[1000.0, -1000.0, 0.0], [-500.0, 500.0, 0.0]], dtype=np.float32)
    probs, loss = be32.empty(logits.shape), be32.empty((2,))
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        be32.softmax_cross_entropy_forward(probs, loss, logits, np.array([1, 1], np.int32))
    np.testing.assert_allclose(loss, [2000.0, 0.0])
    with pytest.raises(ValueError, match=r"sparse targets must lie in \[0, 3\)"):
        be32.softmax_cross_entropy_forward(probs, loss, logits, np.array([0, 3], np.int32))


def test_sigmoid_cross_entropy(be64, rng):
    logits = rng.standard_normal((3, 4)) * 3
    targets = rng.uniform(0, 1, (3, 4))
    probs, loss = be64.empty(logits.shape), be64.empty((3,))

    def total():
        be64.sigmoid_cross_entropy_forward(probs, loss, logits, targets)
        return float(loss.sum() * 0.5)

    expected = numeric_grad(total, logits)
    total()
    reference = [sum(-(t * math.log(1 / (1 + math.exp(-v))) + (1 - t) * math.log(1 - 1 / (1 + math.exp(-v))))
                     for v, t in zip(row, trow)) / 4 for row, trow in zip(logits, targets)]
    np.testing.assert_allclose(loss, reference, rtol=1e-10)
    dlogits = be64.empty(logits.shape)
    be64.sigmoid_cross_entropy_backward(dlogits, probs, targets, 0.5)
    np.testing.assert_allclose(dlogits, expected, rtol=1e-6, atol=1e-8)
    big = np.array([[1000.0, -1000.0]])
    probs2, loss2 = be64.empty(big.shape), be64.empty((1,))
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        be64.sigmoid_cross_entropy_forward(probs2, loss2, big, np.array([[0.0, 0.0]]))
    np.testing.assert_allclose(loss2, [500.0])


@pytest.mark.parametrize("kind", ["sparse", "dense", "binary"])
def test_cross_entropy_on_probabilities(be64, rng, kind):
    probs = rng.uniform(0.05, 0.95, (3, 4))
    binary = kind == "binary"
    if kind == "sparse":
        targets = np.array([3, 0, 1], dtype=np.int32)
        reference = [-math.log(probs[i, t]) for i, t in enumerate(targets)]
    else:
        targets = rng.uniform(0, 1, (3, 4))
        if binary:
            reference = [np.mean([-(t * math.log(p) + (1 - t) * math.log(1 - p))
                                  for p, t in zip(prow, trow)]) for prow, trow in zip(probs, targets)]
        else:
            reference = [-sum(t * math.log(p) for p, t in zip(prow, trow))
                         for prow, trow in zip(probs, targets)]
    loss = be64.empty((3,))

    def total():
        be64.cross_entropy_forward(loss, probs, targets, binary)
        return float(loss.sum() * 0.3)

    expected = numeric_grad(total, probs)
    total()
    np.testing.assert_allclose(loss, reference, rtol=1e-12)
    dprobs = be64.empty(probs.shape)
    be64.cross_entropy_backward(dprobs, probs, targets, binary, 0.3)
    np.testing.assert_allclose(dprobs, expected, rtol=1e-6, atol=1e-8)


def test_cross_entropy_clip(be32):
    probs = np.array([[0.0, 1.0], [0.5, 0.5]], dtype=np.float32)
    targets = np.array([0, 1], dtype=np.int32)
    loss, dprobs = be32.empty((2,)), be32.empty((2, 2))
    be32.cross_entropy_forward(loss, probs, targets, False)
    np.testing.assert_allclose(loss, [-math.log(1e-7), math.log(2)], rtol=1e-6)
    be32.cross_entropy_backward(dprobs, probs, targets, False, 1.0)
    np.testing.assert_allclose(dprobs, [[0.0, 0.0], [0.0, -2.0]])     # clipped entries get 0
    binary_loss = be32.empty((2,))
    be32.cross_entropy_forward(binary_loss, probs, np.array([[1.0, 0.0], [1.0, 1.0]], np.float32), True)
    assert np.isfinite(binary_loss).all()


def test_mean_squared_error(be64, rng):
    pred, targets = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    loss = be64.empty((3,))

    def total():
        be64.mean_squared_error_forward(loss, pred, targets)
        return float(loss.sum() / 3)

    expected = numeric_grad(total, pred)
    total()
    np.testing.assert_allclose(loss, [sum((p - t) ** 2 for p, t in zip(pr, tr)) / 5
                                      for pr, tr in zip(pred, targets)])
    dpred = be64.empty(pred.shape)
    be64.mean_squared_error_backward(dpred, pred, targets, 1 / 3)
    np.testing.assert_allclose(dpred, expected, rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------- metrics
def test_sum_accumulates(be32):
    out = be32.zeros((1,))
    x = np.full(10_000, 0.1, dtype=np.float32)
    be32.sum(out, x)
    np.testing.assert_allclose(out, [1000.0], rtol=1e-6)
    be32.sum(out, x, accumulate=True)
    np.testing.assert_allclose(out, [2000.0], rtol=1e-6)
    with pytest.raises(ValueError, match=r"sum: out must have shape \(1,\)"):
        be32.sum(be32.zeros((2,)), x)


def test_categorical_accuracy_ties_and_dense(be32):
    pred = np.array([[0.2, 0.5, 0.5],      # tie between 1 and 2: argmax is 1
                     [0.7, 0.1, 0.2],
                     [0.3, 0.3, 0.3],      # all tied: argmax is 0
                     [0.1, 0.1, 0.8]], dtype=np.float32)
    sparse = np.array([1, 0, 1, 1], dtype=np.int32)
    out = be32.zeros((1,))
    be32.categorical_accuracy(out, pred, sparse)
    assert out[0] == 2
    be32.categorical_accuracy(out, pred, np.eye(3, dtype=np.float32)[[2, 0, 0, 2]], accumulate=True)
    assert out[0] == 2 + 3


def test_binary_accuracy(be32):
    pred = np.array([[0.9, 0.2], [0.5, 0.51]], dtype=np.float32)
    targets = np.array([[1.0, 0.0], [1.0, 1.0]], dtype=np.float32)
    out = be32.zeros((1,))
    be32.binary_accuracy(out, pred, targets)
    assert out[0] == 3                      # 0.5 is not > 0.5


def test_top_k_accuracy_tie_rule(be32):
    pred = np.array([[1.0, 2.0, 2.0, 0.0]] * 4, dtype=np.float32)
    targets = np.array([1, 2, 0, 3], dtype=np.int32)
    expected = {1: 2, 2: 2, 3: 3, 4: 4}     # class 0 has 2 strictly larger scores, class 3 has 3
    for k, count in expected.items():
        out = be32.zeros((1,))
        be32.top_k_accuracy(out, pred, targets, k)
        assert out[0] == count, k
    dense = np.eye(4, dtype=np.float32)[targets]
    out = be32.zeros((1,))
    be32.top_k_accuracy(out, pred, dense, 3)
    assert out[0] == 3


def test_all_finite(be32):
    out = be32.zeros((1,))
    be32.all_finite(out, np.ones((2, 3), np.float32))
    assert out[0] == 1.0
    for bad in (np.nan, np.inf, -np.inf):
        be32.all_finite(out, np.array([1.0, bad], np.float32))
        assert out[0] == 0.0


# -------------------------------------------------------------------------- optimizers
def test_clipping(be64):
    g = np.array([3.0, -4.0, 0.5])
    be64.clip_by_value(g, 1.0)
    np.testing.assert_array_equal(g, [1.0, -1.0, 0.5])
    g = np.array([3.0, 4.0])
    be64.clip_by_norm(g, 1.0)
    np.testing.assert_allclose(g, [0.6, 0.8])
    g = np.array([0.3, 0.4])
    be64.clip_by_norm(g, 1.0)               # already short enough: unchanged
    np.testing.assert_allclose(g, [0.3, 0.4])


def test_sgd_keras_defaults_and_momentum(be64):
    w, g = np.array([1.0, -2.0]), np.array([0.5, 0.25])
    be64.sgd_update(w, g, None, 0.01, 0.0, False, None)
    np.testing.assert_allclose(w, [1.0 - 0.005, -2.0 - 0.0025])
    for nesterov in (False, True):
        w, v = np.array([1.0, -2.0]), np.array([0.1, 0.2])
        be64.sgd_update(w, g, v, 0.1, 0.9, nesterov, None)
        v_ref = [0.9 * 0.1 - 0.1 * 0.5, 0.9 * 0.2 - 0.1 * 0.25]
        np.testing.assert_allclose(v, v_ref)
        if nesterov:
            w_ref = [1.0 + 0.9 * v_ref[0] - 0.05, -2.0 + 0.9 * v_ref[1] - 0.025]
        else:
            w_ref = [1.0 + v_ref[0], -2.0 + v_ref[1]]
        np.testing.assert_allclose(w, w_ref)
    with pytest.raises(ValueError, match="sgd_update: momentum"):
        be64.sgd_update(w, g, None, 0.1, 0.9, False, None)


def test_sgd_weight_decay_is_decoupled(be64):
    w, g = np.array([2.0]), np.array([1.0])
    be64.sgd_update(w, g, None, 0.1, 0.0, False, 0.5)
    np.testing.assert_allclose(w, [2.0 - 0.1 * 0.5 * 2.0 - 0.1])


def test_adam_keras_defaults_two_steps(be64):
    lr, b1, b2, eps = 0.001, 0.9, 0.999, 1e-7
    w, m, v = np.array([1.0, -1.0]), np.zeros(2), np.zeros(2)
    w_ref, m_ref, v_ref = [1.0, -1.0], [0.0, 0.0], [0.0, 0.0]
    for step, grad in ((1, [0.3, -0.2]), (2, [0.1, 0.4])):
        be64.adam_update(w, np.array(grad), m, v, lr, b1, b2, eps, step, 0.004)
        for i in range(2):
            w_ref[i] -= lr * 0.004 * w_ref[i]
            m_ref[i] = b1 * m_ref[i] + (1 - b1) * grad[i]
            v_ref[i] = b2 * v_ref[i] + (1 - b2) * grad[i] ** 2
            alpha = lr * math.sqrt(1 - b2 ** step) / (1 - b1 ** step)
            w_ref[i] -= alpha * m_ref[i] / (math.sqrt(v_ref[i]) + eps)
        np.testing.assert_allclose(m, m_ref)
        np.testing.assert_allclose(v, v_ref)
        np.testing.assert_allclose(w, w_ref, rtol=1e-12)


def test_rmsprop_keras_defaults_and_momentum(be64):
    g = np.array([0.2, -0.5])
    w, ms = np.array([1.0, 2.0]), np.zeros(2)
    be64.rmsprop_update(w, g, ms, None, 0.001, 0.9, 0.0, 1e-7, None)
    ms_ref = 0.1 * g ** 2
    np.testing.assert_allclose(ms, ms_ref)
    np.testing.assert_allclose(w, [1.0, 2.0] - 0.001 * g / np.sqrt(ms_ref + 1e-7))
    w, ms, mom = np.array([1.0, 2.0]), np.full(2, 0.01), np.array([0.05, -0.05])
    be64.rmsprop_update(w, g, ms, mom, 0.01, 0.9, 0.5, 1e-7, None)
    ms_ref = 0.9 * 0.01 + 0.1 * g ** 2
    mom_ref = 0.5 * np.array([0.05, -0.05]) + 0.01 * g / np.sqrt(ms_ref + 1e-7)
    np.testing.assert_allclose(mom, mom_ref)
    np.testing.assert_allclose(w, [1.0, 2.0] - mom_ref)


def test_adagrad_keras_defaults(be64):
    w, g, acc = np.array([1.0, 2.0]), np.array([0.2, -0.5]), np.full(2, 0.1)
    be64.adagrad_update(w, g, acc, 0.001, 1e-7, None)
    acc_ref = 0.1 + g ** 2
    np.testing.assert_allclose(acc, acc_ref)
    np.testing.assert_allclose(w, [1.0, 2.0] - 0.001 * g / np.sqrt(acc_ref + 1e-7))
