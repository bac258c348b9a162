"""matmul and dot on the backend's GEMM (the same kernel Dense uses)."""

from ..autodiff import Tensor
from .core import as_tensor, cast, empty_like_shape, multiply, needs, record
from .reductions import sum
from .shapes import broadcast_to, expand_dims, reshape, squeeze, stack


def _gemm(a, b, trans_a=False, trans_b=False):
    """op(a) @ op(b) of two 2-D tensors, with its gradient."""
    m = a.shape[1] if trans_a else a.shape[0]
    n = b.shape[0] if trans_b else b.shape[1]
    out = empty_like_shape(a.backend, (m, n))
    a.backend.gemm(out.value, a.value, b.value, trans_a=trans_a, trans_b=trans_b)

    def rule(g):
        # out = A B with A = op(a), B = op(b): dA = g B^T, dB = A^T g
        da = db = None
        if needs(a):
            da = _gemm(b, g, trans_a=trans_b, trans_b=True) if trans_a else \
                _gemm(g, b, trans_b=not trans_b)
        if needs(b):
            db = _gemm(g, a, trans_a=True, trans_b=trans_a) if trans_b else \
                _gemm(a, g, trans_a=not trans_a)
        return (da, db)
    return record(out, (a, b), rule)


def matmul(x1, x2):
    """The matrix product with numpy's rules: 1-D operands get a temporary axis; (..., m, k) @
    (k, n) runs as one GEMM; stacks of matrices multiply pairwise (leading axes broadcast)."""
    a, b = cast(as_tensor(x1), "float32"), cast(as_tensor(x2, as_tensor(x1).backend), "float32")
    if len(a.shape) == 0 or len(b.shape) == 0:
        raise ValueError("ops.matmul: operands must have at least one axis (use ops.multiply)")
    if len(a.shape) == 1:
        return squeeze(matmul(expand_dims(a, 0), b), -2 if len(b.shape) > 1 else -1)
    if len(b.shape) == 1:
        return squeeze(matmul(a, expand_dims(b, 1)), -1)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"ops.matmul: shapes {a.shape} and {b.shape} do not align "
                         f"({a.shape[-1]} != {b.shape[-2]})")
    if len(b.shape) == 2:
        rows = reshape(a, (-1, a.shape[-1]))
        return reshape(_gemm(rows, b), a.shape[:-1] + (b.shape[1],))
    lead = tuple(max(p, q) for p, q in zip((1,) * (len(b.shape) - len(a.shape)) + a.shape[:-2],
                                           (1,) * (len(a.shape) - len(b.shape)) + b.shape[:-2]))
    a = reshape(broadcast_to(a, lead + a.shape[-2:]), (-1,) + a.shape[-2:])
    b = reshape(broadcast_to(b, lead + b.shape[-2:]), (-1,) + b.shape[-2:])
    products = [_gemm(a[i], b[i]) for i in range(a.shape[0])]
    return reshape(stack(products, 0), lead + products[0].shape)


def dot(x1, x2):
    """keras.ops.dot: scalars multiply, 1-D . 1-D is the inner product, otherwise a product over
    the last axis of x1 and the second-to-last (or only) axis of x2."""
    a = as_tensor(x1) if not isinstance(x1, (int, float)) else x1
    b = as_tensor(x2) if not isinstance(x2, (int, float)) else x2
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or not a.shape or not b.shape:
        return multiply(a, b)
    if len(a.shape) == 1 and len(b.shape) == 1:
        return sum(multiply(a, b))
    return matmul(a, b)


def __getattr__(name):
    """keras.ops.linalg's names defined in other modules of minidl.ops (which import this one)."""
    from .namespaces import resolve
    return resolve(__name__, name)


def __dir__():
    from .namespaces import names
    return names(__name__, globals())
