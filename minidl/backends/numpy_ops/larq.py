"""The larq section on the numpy backend: the reference of larq's quantizers and of the binary
(xnor-popcount) inference ops. The contract (minidl/backends/contract/larq.py) checked every
argument.

Each quantizer's formula is larq's as written in larq/quantizers.py, in the backend's dtype.
The binary convolution unpacks the bits back to +-1 integers and takes the dot products in
int64: the integer answer the popcount kernels must give exactly."""

import numpy as np

def _larq_sign(x):
    """larq.math.sign: sign(sign(x) + 0.1), so 0 maps to +1."""
    return np.sign(np.sign(x) + x.dtype.type(0.1))


def _clipped(dout, x, clip):
    return np.where(np.abs(x) <= clip, dout, 0)


_WEIGHTS = (1 << np.arange(32, dtype=np.int64))


def _pack(negative):
    """(..., C) booleans -> (..., ceil(C / 32)) int32 words, bit b of word k = channel 32 k + b."""
    c = negative.shape[-1]
    words = -(-c // 32)
    padded = np.zeros(negative.shape[:-1] + (words * 32,), np.int64)
    padded[..., :c] = negative
    packed = (padded.reshape(negative.shape[:-1] + (words, 32)) * _WEIGHTS).sum(axis=-1)
    return packed.astype(np.uint32).view(np.int32)


def _unpack(bits, c):
    """(..., words) int32 -> (..., c) int64 of +-1."""
    words = bits.view(np.uint32).astype(np.int64)
    negative = (words[..., None] >> np.arange(32)) & 1
    negative = negative.reshape(bits.shape[:-1] + (-1,))[..., :c]
    return 1 - 2 * negative


class NumpyLarqOps:
    """larq's quantizers and binary inference of NumpyBackend."""

    def _quantize_forward(self, out, x, code, name, param, stat):
        t = x.dtype.type
        if name in ("ste_sign", "approx_sign", "swish_sign"):
            q = _larq_sign(x)
        elif name == "ste_heaviside":
            q = np.sign(np.maximum(x, 0))            # larq.math.heaviside: sign(relu(x))
            q[np.isnan(x)] = np.nan
        elif name == "ste_tern":
            threshold = t(param) if stat is None else t(0.7) * stat[0] / t(x.size)
            q = np.sign(np.sign(x + threshold) + np.sign(x - threshold))
        elif name == "dorefa_activations":
            q = np.round(np.clip(x, 0, 1) * t(param)) / t(param)
        else:
            range_ = t(2) * np.tanh(stat[0])
            limited = np.tanh(x) / range_ if range_ != 0 else np.zeros_like(x)
            q = t(2) * (np.round((limited + t(0.5)) * t(param)) / t(param)) - t(1)
        out[...] = q

    def _quantize_backward(self, dx, dout, x, code, name, param, stat):
        t = x.dtype.type
        if name in ("ste_sign", "ste_heaviside", "ste_tern"):
            g = _clipped(dout, x, t(param))
        elif name == "approx_sign":
            a = np.abs(x)
            g = np.where(a <= 1, (1 - a) * 2 * dout, 0)
        elif name == "swish_sign":
            bx = t(param) * x
            with np.errstate(over="ignore"):
                g = dout * t(param) * (2 - bx * np.tanh(bx * t(0.5))) / (1 + np.cosh(bx))
            g[np.isnan(x)] = 0
        elif name == "dorefa_activations":
            g = np.where((x >= 0) & (x <= 1), dout, 0)   # tf.clip_by_value's gradient
        else:
            range_ = t(2) * np.tanh(stat[0])
            g = (t(2) * dout / range_ * (1 - np.tanh(x) ** 2) if range_ != 0
                 else np.zeros_like(x))
            g[np.isnan(x)] = 0
        dx[...] = g

    def _binary_pack_input(self, bits, x):
        bits[...] = _pack(x < 0)

    def _binary_pack_kernel(self, bits, weight):
        per_tap = _pack(np.moveaxis(weight < 0, 3, 2))            # (kh, kw, f, words)
        bits[...] = np.moveaxis(per_tap, 2, 3).reshape(bits.shape)

    def _binary_conv2d_forward(self, out, bits, kernel_bits, bias, plan, pad_value):
        words = bits.shape[-1]
        x = _unpack(bits, plan.c)                                          # (n, h, w, c)
        w = _unpack(kernel_bits.reshape(plan.kh, plan.kw, words, plan.oc).transpose(0, 1, 3, 2),
                    plan.c).transpose(0, 1, 3, 2)                          # (kh, kw, c, f)
        pad_bottom = (plan.oh - 1) * plan.sh + (plan.kh - 1) * plan.dh + 1 - plan.h - plan.pad_top
        pad_right = (plan.ow - 1) * plan.sw + (plan.kw - 1) * plan.dw + 1 - plan.w - plan.pad_left
        padded = np.pad(x, ((0, 0), (plan.pad_top, max(pad_bottom, 0)), (plan.pad_left, max(pad_right, 0)),
                            (0, 0)), constant_values=pad_value)
        result = np.zeros((plan.n, plan.oh, plan.ow, plan.oc), np.int64)
        for ky in range(plan.kh):
            for kx in range(plan.kw):
                y0, x0 = ky * plan.dh, kx * plan.dw
                window = padded[:, y0:y0 + (plan.oh - 1) * plan.sh + 1:plan.sh,
                                x0:x0 + (plan.ow - 1) * plan.sw + 1:plan.sw, :]
                result += np.einsum("nhwc,cf->nhwf", window, w[ky, kx])
        out[...] = result + (0 if bias is None else bias)

    def _binary_pack_thresholds(self, bits, z, bounds, pixels, c):
        bits[...] = _pack(~((bounds[0] <= z) & (z <= bounds[1])))
