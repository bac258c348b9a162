"""The tensor ops of the contract (contract/tensor_ops.py: unary, binary, where, reduce, strided
copies, take, ...) in numpy: the reference that the cpu and opencl kernels are tested against.

Float results are computed in the tensors' own dtype (float32, or float64 in gradient checks);
reductions accumulate in float64, as the backend's other reductions do.
"""

import math

import numpy as np



_ERF = np.vectorize(math.erf, otypes=[np.float64])   # numpy has no erf; the reference may be slow


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return (1.0 / (1.0 + np.exp(-x))).astype(x.dtype)


_UNARY = {
    "negative": np.negative, "abs": np.abs, "sign": np.sign, "sqrt": np.sqrt,
    "square": np.square, "exp": np.exp, "log": np.log, "log1p": np.log1p,
    "relu": lambda x: np.where(x > 0, x, np.where(np.isnan(x), x, 0)).astype(x.dtype),
    "sigmoid": _sigmoid, "tanh": np.tanh, "reciprocal": lambda x: 1 / x,
    "logical_not": lambda x: (x == 0), "floor": np.floor, "round": np.round,
    "erf": lambda x: _ERF(x).astype(x.dtype), "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "arcsinh": np.arcsinh, "arccosh": np.arccosh, "arctanh": np.arctanh,
}

_BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "power": np.power, "maximum": np.maximum, "minimum": np.minimum, "equal": np.equal,
    "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
    "logical_and": lambda a, b: (a != 0) & (b != 0),
    "logical_or": lambda a, b: (a != 0) | (b != 0),
}

_REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}


def _view(flat, offset, shape, strides):
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat[offset:] if offset < flat.size else flat[:0],
                                           shape=shape, strides=[s * item for s in strides])


def round_to_precision(x, precision):
    """x (float32 or float64) rounded to bfloat16 or float16 values, in x's dtype: the bits of
    the float32 value rounded to nearest even (bfloat16), or numpy's float16 conversion."""
    f32 = np.asarray(x, np.float32)
    if precision == "float16":
        with np.errstate(over="ignore"):
            return f32.astype(np.float16).astype(x.dtype)
    u = f32.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(f32), f32, rounded).astype(x.dtype)


class NumpyTensorOps:
    """Mixin of NumpyBackend: the tensor ops (contract/tensor_ops.py checked their arguments)."""

    def _unary(self, out, x, name):
        with np.errstate(all="ignore"):
            out[...] = _UNARY[name](x)

    def _binary(self, out, a, b, name):
        with np.errstate(all="ignore"):
            out[...] = _BINARY[name](a, b)

    def _where(self, out, condition, a, b):
        out[...] = np.where(condition != 0, a, b)

    def _reduce(self, out, x, name, axes):
        extra = {"dtype": np.float64} if name in ("sum", "prod") else {}
        out[...] = _REDUCE[name](x, axis=axes, keepdims=True, **extra)

    def _strided_copy(self, out, x, offset, strides):
        out[...] = _view(x.reshape(-1), offset, out.shape, strides)

    def _strided_add(self, out, x, offset, strides):
        target = _view(out.reshape(-1), offset, x.shape, strides)
        target += x

    def _take(self, out, x, indices, axis):
        out[...] = np.take(x, indices, axis=axis)

    def _take_backward(self, dx, dout, indices, axis):
        moved = np.moveaxis(dx, axis, 0)
        np.add.at(moved, indices, np.moveaxis(dout, axis, 0))

    def _arg_reduce(self, out, x, name):
        out[...] = np.argmax(x, axis=1) if name == "argmax" else np.argmin(x, axis=1)

    def _argsort_rows(self, out, x):
        out[...] = np.argsort(x, axis=1, kind="stable")

    def _scan_rows(self, out, x, name):
        scan = np.cumsum if name == "cumsum" else np.cumprod
        with np.errstate(all="ignore"):
            out[...] = scan(x, axis=1, dtype=np.float64)

    def _cast(self, out, x):
        with np.errstate(invalid="ignore"):
            out[...] = np.trunc(x).reshape(out.shape) if out.dtype.kind == "i" else x.reshape(out.shape)

    def _round_to_precision(self, out, x, precision):
        out[...] = round_to_precision(x, precision)

    def _arange(self, out, start, step):
        flat = out.reshape(-1)
        flat[...] = start + np.arange(flat.size, dtype=np.float64) * step
