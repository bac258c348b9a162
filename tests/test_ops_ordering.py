"""sort, argsort, top_k, cumsum, cumprod, median, quantile and einsum of minidl.ops against
numpy, on every backend (the kernels have their rows in test_ops.py, the gradients theirs
in test_autodiff.py)."""

import numpy as np
import pytest

import minidl
from minidl import ops


@pytest.fixture(params=[b for b in ("numpy", "cpu", "opencl") if b in minidl.available_backends()])
def on_backend(request):
    yield minidl.set_backend(request.param)
    minidl.set_backend("numpy")


def values(rng, *shape):
    return (np.round(rng.standard_normal(shape) * 3) / 2).astype(np.float32)   # with ties


def test_sort_argsort_and_top_k_match_numpy(on_backend):
    x = values(np.random.default_rng(0), 3, 4, 6)
    x[1, 2, 3] = np.nan
    t = ops.convert_to_tensor(x)
    for axis in (0, 1, -1, None):
        np.testing.assert_array_equal(ops.sort(t, axis=axis).numpy(), np.sort(x, axis=axis))
        np.testing.assert_array_equal(ops.argsort(t, axis=axis).numpy(),
                                      np.argsort(x, axis=axis, kind="stable"))
    finite = np.nan_to_num(x)
    got, idx = ops.top_k(ops.convert_to_tensor(finite), 3)
    want = np.argsort(-finite, axis=-1, kind="stable")[..., :3]
    np.testing.assert_array_equal(idx.numpy(), want)
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(finite, want, -1))
    with pytest.raises(ValueError, match="k must be an int in"):
        ops.top_k(t, 7)


def test_cumsum_and_cumprod_match_numpy(on_backend):
    x = values(np.random.default_rng(1), 4, 50) / 4 + 1
    t = ops.convert_to_tensor(x)
    for axis in (0, 1, None):
        np.testing.assert_allclose(ops.cumsum(t, axis=axis).numpy(), np.cumsum(x, axis=axis),
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(ops.cumprod(t, axis=axis).numpy(), np.cumprod(x, axis=axis),
                                   rtol=1e-4)
    ints = ops.cumsum(ops.convert_to_tensor(np.arange(6, dtype=np.int32)))
    assert ints.dtype == "int32" and list(ints.numpy()) == [0, 1, 3, 6, 10, 15]


def test_median_and_quantile_match_numpy(on_backend):
    x = values(np.random.default_rng(2), 4, 5, 3)
    t = ops.convert_to_tensor(x)
    np.testing.assert_allclose(ops.median(t).numpy(), np.median(x))
    np.testing.assert_allclose(ops.median(t, axis=1, keepdims=True).numpy(),
                               np.median(x, axis=1, keepdims=True))
    for method in ("linear", "lower", "higher", "midpoint", "nearest"):
        for q, axis in ((0.3, None), ([0.0, 0.25, 1.0], (0, 2)), ([0.5, 0.9], -1)):
            np.testing.assert_allclose(
                ops.quantile(t, q, axis=axis, method=method).numpy(),
                np.quantile(x, q, axis=axis, method=method), rtol=1e-6, atol=1e-6)
    x[0, 0, 0] = np.nan
    assert np.isnan(ops.median(ops.convert_to_tensor(x)).numpy())
    with pytest.raises(ValueError, match="q must be"):
        ops.quantile(t, 1.5)
    with pytest.raises(ValueError, match="method must be"):
        ops.quantile(t, 0.5, method="cubic")


@pytest.mark.parametrize("spec, shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(4,), (4,)]), ("ij->ji", [(3, 4)]), ("ij", [(3, 4)]), ("ij,kj", [(3, 4), (2, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)]), ("i,j->ij", [(3,), (4,)]),
    ("bij,bjk,bkl->bil", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]), ("bij->j", [(2, 3, 4)]),
    ("bi,bj->bij", [(2, 3), (2, 4)]), ("ij,jk->", [(3, 4), (4, 2)])])
def test_einsum_matches_numpy(on_backend, spec, shapes):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    got = ops.einsum(spec, *[ops.convert_to_tensor(a) for a in arrays]).numpy()
    np.testing.assert_allclose(got, np.einsum(spec, *arrays), rtol=1e-4, atol=1e-5)


def test_einsum_errors_name_the_problem():
    a = np.ones((3, 3), np.float32)
    with pytest.raises(ValueError, match="repeated inside one operand"):
        ops.einsum("ii->i", a)
    with pytest.raises(ValueError, match="names 2 operands"):
        ops.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="has sizes"):
        ops.einsum("ij,jk->ik", a, np.ones((4, 2), np.float32))
