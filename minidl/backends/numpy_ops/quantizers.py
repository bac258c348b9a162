"""The numpy reference of larq's quantizers (a mixin of NumpyBackend; the contract is
quantize_forward / quantize_backward in minidl/backends/base.py). Each formula is larq's as
written in larq/quantizers.py, in the backend's dtype."""

import numpy as np

from ..checks import check_shape
from ..quantizer_args import quantizer_code


def _larq_sign(x):
    """larq.math.sign: sign(sign(x) + 0.1), so 0 maps to +1."""
    return np.sign(np.sign(x) + x.dtype.type(0.1))


def _clipped(dout, x, clip):
    return np.where(np.abs(x) <= clip, dout, 0)


class NumpyQuantizerOps:
    def quantize_forward(self, out, x, name, param=0.0, stat=None):
        op = "quantize_forward"
        quantizer_code(op, name, param, stat, x.size)
        check_shape(op, "out", out, x.shape)
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

    def quantize_backward(self, dx, dout, x, name, param=0.0, stat=None):
        op = "quantize_backward"
        quantizer_code(op, name, param, stat, x.size)
        check_shape(op, "dout", dout, x.shape)
        check_shape(op, "dx", dx, x.shape)
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
