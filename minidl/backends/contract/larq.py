"""The larq section of the contract: larq's quantizers as elementwise ops with their
straight-through gradients (quantize_forward / quantize_backward) and binary (xnor-popcount)
inference (binary_pack_input, binary_pack_kernel, binary_conv2d_forward). The public ops check
every argument once (the quantizer's name, scalar and statistic; the packed shapes against the
plan) and pass the quantizer's integer code; a backend implements the underscore names
(numpy_ops/larq.py, cpu/larq.py, opencl/larq.py)."""

import math
from dataclasses import dataclass

from .checks import optional_shape, same_shape


@dataclass
class PoolScratch:
    """What the default pooled binary convolution keeps on its pool plan (Window2D.scratch_for):
    the full-size convolution and the argmax max_pool2d_forward writes, of `backend`."""
    backend: object = None
    z: object = None
    argmax: object = None

# larq's quantizers (minidl.larq.quantizers) as ops; a backend's kernels use the position of a
# name as its code (csrc/quantize.h, kernels/quantize.cl). DoReFa's two modes are two ops.
QUANTIZERS = ("ste_sign", "approx_sign", "swish_sign", "ste_heaviside", "ste_tern",
              "dorefa_activations", "dorefa_weights")


def quantizer_code(op, name, param, stat, n):
    """(code, param as a float) of quantizer `name` after checking its arguments."""
    if name not in QUANTIZERS:
        raise ValueError(f"{op}: name must be one of {QUANTIZERS}, got {name!r}")
    if isinstance(param, bool) or not isinstance(param, (int, float)) or math.isnan(param):
        raise TypeError(f"{op} ({name}): param must be a number, got {param!r}")
    if name == "dorefa_weights" and stat is None:
        raise ValueError(f"{op} (dorefa_weights): stat must be a (1,) tensor holding max |x|")
    if stat is not None:
        if name not in ("ste_tern", "dorefa_weights"):
            raise ValueError(f"{op} ({name}): only ste_tern and dorefa_weights take a stat tensor")
        same_shape(op, "stat", stat, (1,))
    if name.startswith("dorefa") and op == "quantize_forward" and not param >= 1:
        raise ValueError(f"{op} ({name}): param must be the number of levels 2^k_bit - 1 >= 1, "
                         f"got {param!r}")
    if n == 0 and stat is not None and name == "ste_tern":
        raise ValueError(f"{op} (ste_tern): Ternary Weight Networks' threshold needs a non-empty x")
    return QUANTIZERS.index(name), float(param)


def _words(c):
    """32-bit words per packed row of c channels."""
    return -(-c // 32)


class LarqSection:
    """The contract's quantizers and binary inference ops; a backend implements the underscore
    names."""

    def quantize_forward(self, out, x, name, param=0.0, stat=None):
        """out = larq's quantizer `name` (one of QUANTIZERS) of x, elementwise; out may alias x.
        sign maps 0 to +1. param: ste_tern's threshold, DoReFa's levels 2^k_bit - 1. stat, a
        (1,) tensor or None: sum |x| for ste_tern with Ternary Weight Networks' threshold
        0.7 * mean |x| (then param is ignored), max |x| for dorefa_weights (required).
        The implementation gets the quantizer's code (its index in QUANTIZERS) and its name."""
        op = "quantize_forward"
        code, param = quantizer_code(op, name, param, stat, x.size)
        same_shape(op, "out", out, x.shape)
        self._quantize_forward(out, x, code, name, param, stat)

    def quantize_backward(self, dx, dout, x, name, param=0.0, stat=None):
        """dx = dout * the straight-through gradient of quantizer `name` at x, as larq defines
        it; dx may alias dout. param: the clip value of ste_sign, ste_heaviside and ste_tern
        (math.inf: no clipping), beta of swish_sign; stat as in quantize_forward."""
        op = "quantize_backward"
        code, param = quantizer_code(op, name, param, stat, x.size)
        same_shape(op, "dout", dout, x.shape)
        same_shape(op, "dx", dx, x.shape)
        self._quantize_backward(dx, dout, x, code, name, param, stat)

    def binary_pack_input(self, bits, x):
        """bits (..., ceil(C / 32)) int32 = the larq signs of x (..., C) packed 32 channels to
        a word: bit b of word k is 1 where x[..., 32 k + b] < 0 (-1), 0 where x >= 0 (+1) and
        past C."""
        op = "binary_pack_input"
        if not x.shape:
            raise ValueError(f"{op}: x must have a channel axis (..., C), got a scalar")
        same_shape(op, "bits", bits, tuple(x.shape[:-1]) + (_words(x.shape[-1]),))
        self._binary_pack_input(bits, x)

    def binary_pack_kernel(self, bits, weight):
        """bits (kh * kw * ceil(C / 32), F) int32 = the signs of weight (kh, kw, C, F): word
        (t * ceil(C / 32) + k, j) holds channels 32 k ... of tap t of filter j. Done once."""
        op = "binary_pack_kernel"
        if len(weight.shape) != 4:
            raise ValueError(f"{op}: weight must be (kh, kw, C, F), got shape {tuple(weight.shape)}")
        kh, kw, c, f = weight.shape
        same_shape(op, "bits", bits, (kh * kw * _words(c), f))
        self._binary_pack_kernel(bits, weight)

    def binary_conv2d_forward(self, out, bits, kernel_bits, bias, plan, pad_value, pool=None):
        """out (N, OH, OW, F) float32 = the exact integer dot products of the +-1 input windows
        (bits: binary_pack_input of (N, H, W, C)) with the +-1 filters (binary_pack_kernel),
        plus bias (F,) or None. plan: conv2d_plan of the float convolution (groups 1). A tap in
        the padding is an input of +1 when pad_value is 1, of 0 (not counted) when it is 0.
        pool: a pool2d_plan over the convolution's output, or None; out then holds the maxima
        of its windows (max_pool2d_forward of the convolution, padding never winning) and has
        pool's output shape, and the full-size convolution need not be written anywhere."""
        op = "binary_conv2d_forward"
        if pad_value not in (0, 1) or isinstance(pad_value, bool):
            raise ValueError(f"{op}: pad_value must be 0 or 1, got {pad_value!r}")
        if plan.groups != 1:
            raise ValueError(f"{op}: the binary convolution has no groups, got a plan with groups={plan.groups}")
        words = _words(plan.c)
        same_shape(op, "bits", bits, (plan.n, plan.h, plan.w, words))
        same_shape(op, "kernel_bits", kernel_bits, (plan.kh * plan.kw * words, plan.oc))
        optional_shape(op, "bias", bias, (plan.oc,))
        if pool is None:
            same_shape(op, "out", out, plan.out_shape)
            self._binary_conv2d_forward(out, bits, kernel_bits, bias, plan, int(pad_value))
            return
        if tuple(pool.in_shape) != tuple(plan.out_shape):
            raise ValueError(f"{op}: pool must pool the convolution's output {tuple(plan.out_shape)}, "
                             f"got a pool plan of input {tuple(pool.in_shape)}")
        same_shape(op, "out", out, pool.out_shape)
        self._binary_conv2d_pool_forward(out, bits, kernel_bits, bias, plan, int(pad_value), pool)

    def _binary_conv2d_pool_forward(self, out, bits, kernel_bits, bias, plan, pad_value, pool):
        """By default the convolution into a scratch tensor, then max_pool2d_forward (the cpu
        fuses the two: csrc/binary_conv.c). The scratch tensors live on the pool plan, made
        once, not at every prediction."""
        scratch = pool.scratch_for(PoolScratch)
        if scratch.backend is not self:
            scratch.backend = self
            scratch.z, scratch.argmax = self.empty(plan.out_shape), self.empty(pool.out_shape, "int32")
        self._binary_conv2d_forward(scratch.z, bits, kernel_bits, bias, plan, pad_value)
        self.max_pool2d_forward(out, scratch.argmax, scratch.z, pool)

    def binary_pack_thresholds(self, bits, z, bounds):
        """bits (..., ceil(C / 32)) int32 = the signs of a BatchNormalization of z (..., C), the
        integer sums of a binary layer, folded into a threshold (lq.convert): bit b of word k is
        1 (-1) where z[..., 32 k + b] is outside [lo, hi] of its channel, bounds (2, C) holding
        lo then hi (+-inf allowed). binary_pack_input's layout. The implementation gets the
        pixel count (the product of the leading axes) and C."""
        op = "binary_pack_thresholds"
        if not z.shape:
            raise ValueError(f"{op}: z must have a channel axis (..., C), got a scalar")
        c = z.shape[-1]
        same_shape(op, "bits", bits, tuple(z.shape[:-1]) + (_words(c),))
        same_shape(op, "bounds", bounds, (2, c))
        self._binary_pack_thresholds(bits, z, bounds, math.prod(z.shape[:-1]), c)
