"""keras.ops.linalg's decompositions and solvers, and fft / rfft.

Host-side: the factorizations run in float64 numpy on a copy of the tensor, and the result is
uploaded to the tensor's backend (these are small-matrix, eager computations; minidl has no LAPACK
kernels). The ones Keras differentiates through in training-style code get gradient rules made
of minidl.ops: inv, det, slogdet / logdet, solve, solve_triangular, cholesky.
fft-family functions take and return (real, imag) pairs, as Keras's do (minidl has no complex
dtype).
"""

import numpy as np

from .core import as_tensor, cast, convert_to_tensor, negative, record
from .linalg import matmul
from .reductions import sum as reduce_sum
from .shapes import expand_dims, transpose


def _matrix(x, op, square=True):
    t = cast(as_tensor(x), "float32")
    if len(t.shape) < 2 or (square and t.shape[-1] != t.shape[-2]):
        raise ValueError(f"ops.{op}: x must be a {'square ' if square else ''}matrix or a stack of "
                         f"them (..., M, {'M' if square else 'N'}), got shape {t.shape}")
    return t


def _host64(t):
    return np.asarray(t.backend.to_numpy(t.value), np.float64)


def _up(array, like, dtype="float32"):
    return convert_to_tensor(np.asarray(array).astype(np.int32 if dtype == "int32" else np.float32),
                             dtype=dtype, backend=like.backend)


def _mT(t):
    rank = len(t.shape)
    return transpose(t, tuple(range(rank - 2)) + (rank - 1, rank - 2))


def inv(x):
    t = _matrix(x, "inv")
    out = _up(np.linalg.inv(_host64(t)), t)
    return record(out, (t,), lambda g: (negative(matmul(matmul(_mT(out), g), _mT(out))),))


def det(x):
    t = _matrix(x, "det")
    out = _up(np.linalg.det(_host64(t)), t)
    # d det / dA = det * A^-T
    return record(out, (t,), lambda g: (expand_dims(expand_dims(g * out, -1), -1) * _mT(inv(t)),))


def slogdet(x):
    """(sign, log|det|) of square matrices."""
    t = _matrix(x, "slogdet")
    sign, logabs = np.linalg.slogdet(_host64(t))
    out = _up(logabs, t)
    out = record(out, (t,), lambda g: (expand_dims(expand_dims(g, -1), -1) * _mT(inv(t)),))
    return _up(sign, t), out


def logdet(x):
    """log det of positive-definite matrices (NaN where the determinant is negative)."""
    sign, logabs = slogdet(x)
    from .core import where, less
    return where(less(sign, 0.0), float("nan"), logabs)


def solve(a, b):
    """x with a x = b (b a vector (..., M) or matrices (..., M, K))."""
    ta = _matrix(a, "solve")
    tb = cast(as_tensor(b, ta.backend), "float32")
    vector = len(tb.shape) == len(ta.shape) - 1
    bb = _host64(tb)[..., None] if vector else _host64(tb)
    xs = np.linalg.solve(_host64(ta), bb)
    out = _up(xs[..., 0] if vector else xs, ta)

    def rule(g):
        gb = solve(_mT(ta), g)                       # A^-T g
        if vector:
            ga = negative(expand_dims(gb, -1) * expand_dims(out, -2))
        else:
            ga = negative(matmul(gb, _mT(out)))
        return ga, gb
    return record(out, (ta, tb), rule)


def solve_triangular(a, b, lower=False):
    """solve with a triangular: only its lower (or upper) triangle is read."""
    ta = _matrix(a, "solve_triangular")
    from .composite import tril, triu
    return solve(tril(ta) if lower else triu(ta), b)


def cholesky(x, upper=False):
    """The Cholesky factor L (L L^T = x), or its transpose with upper=True."""
    t = _matrix(x, "cholesky")
    try:
        low = np.linalg.cholesky(_host64(t))
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"ops.cholesky: x is not positive definite ({exc})") from None
    out = _up(low, t)

    def rule(g):
        # Murray (2016): dA = L^-T Phi(L^T dL) L^-1, symmetrized; Phi keeps the lower triangle
        # and halves the diagonal
        from .composite import tril
        from .creation import eye
        n = t.shape[-1]
        half = 1.0 - 0.5 * eye(n, backend=t.backend)
        phi = tril(matmul(_mT(out), g)) * half
        linv = inv(out)
        s = matmul(matmul(_mT(linv), phi), linv)
        return ((s + _mT(s)) * 0.5,)
    out = record(out, (t,), rule)
    return _mT(out) if upper else out


def cholesky_inverse(x, upper=False):
    """The inverse of A from its Cholesky factor x (A = x x^T, or x^T x with upper=True)."""
    t = _matrix(x, "cholesky_inverse")
    a = matmul(_mT(t), t) if upper else matmul(t, _mT(t))
    return inv(a)


def eig(x):
    """(eigenvalues, eigenvectors) of general square matrices (host-side, no gradient). The
    real parts: minidl has no complex dtype, so complex eigenvalues raise."""
    t = _matrix(x, "eig")
    w, v = np.linalg.eig(_host64(t))
    if np.iscomplexobj(w) and np.any(np.abs(w.imag) > 1e-6 * np.maximum(np.abs(w.real), 1)):
        raise ValueError("ops.eig: x has complex eigenvalues, which minidl (float32 tensors "
                         "only) cannot hold")
    return _up(np.real(w), t), _up(np.real(v), t)


def eigh(x):
    """(eigenvalues ascending, eigenvectors) of symmetric matrices."""
    t = _matrix(x, "eigh")
    w, v = np.linalg.eigh(_host64(t))
    return _up(w, t), _up(v, t)


def lstsq(a, b, rcond=None):
    """The least-squares solution x of a x = b."""
    ta = _matrix(a, "lstsq", square=False)
    tb = cast(as_tensor(b, ta.backend), "float32")
    if len(ta.shape) != 2:
        raise ValueError(f"ops.lstsq: a must be a matrix (M, N), got shape {ta.shape}")
    xs = np.linalg.lstsq(_host64(ta), _host64(tb), rcond=rcond)[0]
    return _up(xs, ta)


def lu_factor(x):
    """(lu, pivots) as scipy.linalg.lu_factor: L (unit diagonal, below) and U in one matrix,
    pivots the 0-based row swapped with each row in turn (partial pivoting)."""
    t = _matrix(x, "lu_factor")
    a = _host64(t)
    lead = a.shape[:-2]
    flat = a.reshape((-1,) + a.shape[-2:]).copy()
    pivots = np.zeros(flat.shape[:2], np.int32)
    n = a.shape[-1]
    for m in range(flat.shape[0]):
        lu = flat[m]
        for k in range(n):
            p = k + int(np.argmax(np.abs(lu[k:, k])))
            pivots[m, k] = p
            if p != k:
                lu[[k, p]] = lu[[p, k]]
            if lu[k, k] != 0:
                lu[k + 1:, k] /= lu[k, k]
                lu[k + 1:, k + 1:] -= np.outer(lu[k + 1:, k], lu[k, k + 1:])
    return _up(flat.reshape(a.shape), t), _up(pivots.reshape(lead + (n,)), t, "int32")



def qr(x, mode="reduced"):
    """(q, r) of x (..., M, N); mode 'reduced' or 'complete'."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"ops.qr: mode must be 'reduced' or 'complete', got {mode!r}")
    t = _matrix(x, "qr", square=False)
    q, r = np.linalg.qr(_host64(t), mode=mode)
    return _up(q, t), _up(r, t)


def svd(x, full_matrices=True, compute_uv=True):
    """(u, s, vh) of x (..., M, N), or s alone with compute_uv=False."""
    t = _matrix(x, "svd", square=False)
    if not compute_uv:
        return _up(np.linalg.svd(_host64(t), compute_uv=False), t)
    u, s, vh = np.linalg.svd(_host64(t), full_matrices=full_matrices)
    return _up(u, t), _up(s, t), _up(vh, t)


def matrix_rank(x, tol=None):
    t = _matrix(x, "matrix_rank", square=False)
    return _up(np.linalg.matrix_rank(_host64(t), tol=tol), t, "int32")


def pinv(x, rcond=None):
    """The Moore-Penrose pseudo-inverse (numpy's default rcond, 1e-15, when None)."""
    t = _matrix(x, "pinv", square=False)
    return _up(np.linalg.pinv(_host64(t), rcond=1e-15 if rcond is None else rcond), t)


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - numpy's argument name
    """Vector and matrix norms as numpy.linalg.norm. Vector norms and the Frobenius norm are
    composed of minidl.ops (gradients); the matrix 2 / nuclear norms run on the host."""
    from .composite import norm as vector_norm
    from .core import abs as absolute, power
    from .reductions import max as reduce_max, min as reduce_min
    t = cast(as_tensor(x), "float32")
    rank = len(t.shape)
    if axis is None and rank == 2 and ord is not None:
        axis = (0, 1)
    if axis is None and rank == 1 and ord is not None:
        axis = 0
    if axis is None:
        if ord not in (None, 2, "fro", "euclidean"):
            raise ValueError(f"ops.norm: ord {ord!r} needs an axis for a tensor of rank {rank}")
        return vector_norm(t, None, None, keepdims)
    if isinstance(axis, int) or len(axis) == 1:
        ax = axis if isinstance(axis, int) else axis[0]
        if ord in (None, 2, 1, float("inf")):
            return vector_norm(t, ord, ax, keepdims)
        if ord == float("-inf"):
            return reduce_min(absolute(t), ax, keepdims)
        if ord == 0:
            from .core import not_equal
            return reduce_sum(not_equal(t, 0.0), ax, keepdims)
        if isinstance(ord, (int, float)):
            return power(reduce_sum(power(absolute(t), float(ord)), ax, keepdims), 1.0 / ord)
        raise ValueError(f"ops.norm: invalid ord {ord!r} for a vector norm")
    a0, a1 = (a % rank for a in axis)
    if ord in (None, "fro"):
        return vector_norm(t, None, (a0, a1), keepdims)
    if ord in (1, -1):
        col = reduce_sum(absolute(t), a0, keepdims=True)
        out = (reduce_max if ord == 1 else reduce_min)(col, a1, keepdims=True)
    elif ord in (float("inf"), float("-inf")):
        row = reduce_sum(absolute(t), a1, keepdims=True)
        out = (reduce_max if ord > 0 else reduce_min)(row, a0, keepdims=True)
    elif ord in (2, -2, "nuc"):
        array = np.moveaxis(_host64(t), (a0, a1), (-2, -1))
        s = np.linalg.svd(array, compute_uv=False)
        value = s.max(-1) if ord == 2 else s.min(-1) if ord == -2 else s.sum(-1)
        value = np.expand_dims(np.expand_dims(value, -1), -1)
        out = _up(np.moveaxis(value, (-2, -1), (a0, a1)), t)
    else:
        raise ValueError(f"ops.norm: invalid ord {ord!r} for a matrix norm")
    if keepdims:
        return out
    from .shapes import squeeze
    return squeeze(out, (a0, a1))


# ------------------------------------------------------------ fft
def _pair(x, op):
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError(f"ops.{op}: x must be a (real, imag) pair of tensors")
    re, im = cast(as_tensor(x[0]), "float32"), cast(as_tensor(x[1]), "float32")
    if re.shape != im.shape:
        raise ValueError(f"ops.{op}: real and imag parts must have the same shape, got {re.shape} "
                         f"and {im.shape}")
    return re, _host64(re) + 1j * _host64(im)


def _split(z, like):
    return _up(z.real, like), _up(z.imag, like)


def fft(x):
    """The FFT along the last axis of (real, imag), as a (real, imag) pair."""
    like, z = _pair(x, "fft")
    return _split(np.fft.fft(z, axis=-1), like)


def fft2(x):
    like, z = _pair(x, "fft2")
    return _split(np.fft.fft2(z, axes=(-2, -1)), like)


def ifft2(x):
    like, z = _pair(x, "ifft2")
    return _split(np.fft.ifft2(z, axes=(-2, -1)), like)


def rfft(x, fft_length=None):
    """The FFT of a real signal along its last axis: (real, imag) of its fft_length // 2 + 1
    non-negative frequencies."""
    t = cast(as_tensor(x), "float32")
    return _split(np.fft.rfft(_host64(t), n=fft_length, axis=-1), t)


def irfft(x, fft_length=None):
    like, z = _pair(x, "irfft")
    return _up(np.fft.irfft(z, n=fft_length, axis=-1), like)
