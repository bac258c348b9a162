"""Depthwise convolution on numpy: the padded input seen through windows.window_view, one
vectorized multiply-add per kernel tap (the only Python loop runs over the KH * KW taps).

Shapes: x (N, H, W, C), weight (KH, KW, C, M), out (N, OH, OW, C * M) seen as (N, OH, OW, C, M).
NumpyDepthwiseOps is a mixin of NumpyBackend.
"""

import numpy as np

from ..depthwise_geometry import multiplier
from .windows import padded_input, window_view


def _taps(plan):
    return ((i, j) for i in range(plan.kh) for j in range(plan.kw))


def _by_multiplier(t, plan):
    """An (N, OH, OW, C * M) tensor seen as (N, OH, OW, C, M)."""
    return t.reshape(plan.n, plan.oh, plan.ow, plan.c, multiplier(plan))


class NumpyDepthwiseOps:
    """The depthwise section's implementations (contract/depthwise.py checked every tensor
    against the plan)."""

    def _depthwise_conv2d_forward(self, out, x, weight, bias, plan):
        windows = window_view(padded_input(x, plan, 0.0), plan)        # (N, OH, OW, KH, KW, C)
        acc = np.zeros((plan.n, plan.oh, plan.ow, plan.c, multiplier(plan)), dtype=out.dtype)
        for i, j in _taps(plan):
            acc += windows[:, :, :, i, j, :, None] * weight[i, j]
        acc = acc.reshape(plan.out_shape)
        if bias is not None:
            acc += bias
        out[...] = acc

    def _depthwise_conv2d_backward_data(self, dx, dout, weight, plan):
        dout5 = _by_multiplier(dout, plan)
        hp = plan.h + plan.pad_top + plan.pad_bottom
        wp = plan.w + plan.pad_left + plan.pad_right
        dxp = np.zeros((plan.n, hp, wp, plan.c), dtype=dx.dtype)
        for i, j in _taps(plan):
            dxp[:, i:i + plan.sh * plan.oh:plan.sh, j:j + plan.sw * plan.ow:plan.sw, :] += \
                (dout5 * weight[i, j]).sum(axis=-1)
        dx[...] = dxp[:, plan.pad_top:plan.pad_top + plan.h, plan.pad_left:plan.pad_left + plan.w, :]

    def _depthwise_conv2d_backward_filter(self, dweight, dbias, dout, x, plan):
        windows = window_view(padded_input(x, plan, 0.0), plan)
        dout5 = _by_multiplier(dout, plan)
        for i, j in _taps(plan):
            dweight[i, j] = np.einsum("nhwc,nhwcm->cm", windows[:, :, :, i, j, :], dout5)
        if dbias is not None:
            dbias[...] = dout.reshape(-1, plan.oc).sum(axis=0)
