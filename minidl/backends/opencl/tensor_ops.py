"""The tensor ops of the contract (contract/tensor_ops.py, which checked their arguments) as
kernels of tensor_ops.cl.

Each operand layout (shape and strides) becomes -D constants of its own program, built once
and cached by the runtime: a training step with fixed shapes reuses its programs and moves
nothing to or from the host.
"""

import math

import numpy as np

from ..contract.checks import BINARY_OPS, REDUCE_OPS, UNARY_OPS
from ..checks import broadcast_strides, contiguous_strides

FILE = "tensor_ops.cl"


def _layout(prefix, values, pad):
    values = list(values) + [pad] * (8 - len(values))
    return {f"{prefix}{k}": int(v) for k, v in enumerate(values)}


def _space(shape):
    """RANK and D0..D7 of an iteration space (a 0-d one is one element of rank 1)."""
    shape = tuple(shape) or (1,)
    return dict(_layout("D", shape, 1), RANK=len(shape))


def _coalesced(shape, *strides):
    """(shape, strides...) with size-1 axes dropped and neighbouring axes merged wherever every
    operand steps through them as through one axis: the same offsets for each linear index,
    with fewer divisions per element (a contiguous (128, 32, 32, 3) operand becomes one axis:
    a binary op on it ran ~10x faster on PoCL). Keeps at least one axis."""
    axes = [(n, [s[k] for s in strides]) for k, n in enumerate(shape) if n != 1]
    merged = []
    for n, steps in axes:
        if merged and all(outer == inner * n for outer, inner in zip(merged[-1][1], steps)):
            merged[-1] = (merged[-1][0] * n, steps)
        else:
            merged.append((n, steps))
    if not merged:
        return (1,), *([0] for _ in strides)
    return (tuple(n for n, _ in merged),
            *([steps[i] for _, steps in merged] for i in range(len(strides))))


class OpenCLTensorOps:
    """Mixin of OpenCLBackend: the tensor ops."""

    def _launch(self, name, defines, n, *args):
        self._launch_kernel(self.rt.kernel(FILE, name, defines), n, *args)

    def _launch_kernel(self, kernel, n, *args):
        """Run `kernel` over n work-items (rounded up to a work-group multiple)."""
        if n <= 0:
            return
        local = self._local_1d
        while local > 1 and n < local * 8:
            local //= 2
        self.rt.launch(kernel, (-(-n // local) * local,), (local,), *args)

    def _unary(self, out, x, name):
        self._launch("unary", {"OP": UNARY_OPS.index(name)}, x.size, out, x, x.size)

    def _binary(self, out, a, b, name):
        shape = tuple(out.shape) or (1,)
        steps = [[0] * len(shape) if isinstance(t, float)
                 else broadcast_strides(t.shape or (1,), shape) for t in (a, b)]
        shape, *steps = _coalesced(shape, *steps)
        defines = dict(_space(shape), OP=BINARY_OPS.index(name))
        args = []
        for tag, t, strides in (("A", a, steps[0]), ("B", b, steps[1])):
            scalar = isinstance(t, float)
            defines[f"{tag}_SCALAR"] = int(scalar)
            defines.update(_layout(f"S{tag}", strides, 0))
            args.append(out if scalar else t)   # an unused pointer stands in for a scalar
        scalars = [a if isinstance(a, float) else 0.0, b if isinstance(b, float) else 0.0]
        self._launch("binary", defines, out.size, out, *args, *scalars, out.size)

    def _where(self, out, condition, a, b):
        shape = tuple(out.shape) or (1,)
        shape, *steps = _coalesced(shape, *(broadcast_strides(t.shape or (1,), shape)
                                            for t in (condition, a, b)))
        defines = _space(shape)
        for tag, strides in zip("CAB", steps):
            defines.update(_layout(f"S{tag}", strides, 0))
        self._launch("where_select", defines, out.size, out, condition, a, b, out.size)

    def _reduce(self, out, x, name, axes):
        shape = tuple(x.shape) or (1,)
        kept = tuple(out.shape) or (1,)
        reduced = [n if k in axes else 1 for k, n in enumerate(shape)]
        defines = dict(_space(kept), OP=REDUCE_OPS.index(name))
        defines.update(_layout("XS", contiguous_strides(shape), 0))
        defines.update(_layout("R", reduced, 1))
        self._launch("reduce", defines, out.size, out, x, out.size, math.prod(reduced))

    def _strided(self, kernel, out, x, offset, strides, shape, dtype):
        shape = tuple(shape) or (1,)
        defines = dict(_space(shape), T="int" if dtype == np.int32 else "float")
        defines.update(_layout("S", list(strides) or [0], 0))
        n = math.prod(shape)
        self._launch(kernel, defines, n, out, x, int(offset), n)

    def _strided_copy(self, out, x, offset, strides):
        self._strided("strided_copy", out, x, offset, strides, out.shape, out.dtype)

    def _strided_add(self, out, x, offset, strides):
        self._strided("strided_add", out, x, offset, strides, x.shape, np.float32)

    def _take_sizes(self, x, axis, m):
        inner = math.prod(x.shape[axis + 1:])
        return x.shape[axis], inner, m, math.prod(x.shape[:axis])

    def _take(self, out, x, indices, axis):
        if x.dtype != np.float32:   # this backend's kernel (minidl.ops takes ints through floats)
            raise ValueError(f"opencl take: x must be float32, got {x.dtype}")
        n, inner, m, outer = self._take_sizes(x, axis, indices.shape[0])
        self._launch("take_float", {}, out.size, out, x, indices, n, inner, m, out.size)

    def _take_backward(self, dx, dout, indices, axis):
        n, inner, m, outer = self._take_sizes(dx, axis, indices.shape[0])
        self._launch("take_backward", {}, outer * inner, dx, dout, indices, n, inner, m,
                     outer * inner)

    def _arg_reduce(self, out, x, name):
        self._launch("arg_reduce", {}, x.shape[0], out, x, x.shape[0], x.shape[1],
                     int(name == "argmin"))

    def _argsort_rows(self, out, x):
        kernel = self.rt.kernel("row_order.cl", "argsort_rows")
        self._launch_kernel(kernel, out.size, out, x, *x.shape)

    def _scan_rows(self, out, x, name):
        kernel = self.rt.kernel("row_order.cl", "scan_rows")
        self._launch_kernel(kernel, x.shape[0], out, x, *x.shape, int(name == "cumprod"))

    def _round_to_precision(self, out, x, precision):
        self._run1d("precision.cl", f"round_{precision}", x.size, out, x, x.size)

    def _cast(self, out, x):
        if out.dtype == x.dtype:
            self.copy(out, x)
        else:
            kernel = "float_to_int" if out.dtype == np.int32 else "int_to_float"
            self._launch(kernel, {}, x.size, out, x, x.size)

    def _arange(self, out, start, step):
        if out.dtype == np.int32:
            self._launch("arange_int", {}, out.size, out, int(start), int(step), out.size)
        else:
            self._launch("arange_float", {}, out.size, out, float(start), float(step), out.size)
