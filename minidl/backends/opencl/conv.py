"""Conv2D's three ops on the opencl backend: conv2d_forward, conv2d_backward_data and
conv2d_backward_filter, in the contract's argument order (outputs, inputs, weights, plan).

Four algorithms:
  direct    with the tiled GEMM family (the GPU profile): direct convolutions that stage each
            work-group's input patch with its halo in local memory once for all kernel taps
            (conv_direct.py, kernels/conv_direct.cl, conv_direct_filter.cl): the forward pass
            and the filter gradient of every geometry, the input gradient at stride 1, wherever
            the work-group fits the device.
  tiled     the GPU profile's fallback: implicit GEMMs with work-group tiles in local memory
            (kernels/conv_tiled.cl) for all three ops and every geometry.
  implicit  an implicit GEMM (kernels/conv_implicit.cl) that reads each patch straight from x,
            with the register blocks of the direct GEMM family: no im2col matrix. Used with
            the direct family when the layer has at least IMPLICIT_MIN_FILTERS filters.
  im2col    the patches copied into a matrix (kernels/conv.cl), then one GEMM of any family.
A 1x1, stride-1, unpadded convolution is a plain GEMM on x. The input gradient of a stride-1
convolution is computed as another convolution (rotated filters), implicit when it qualifies.
Dilated and grouped convolutions take im2col in every profile: group g's patches (its channel
slice, dilated taps) times its weight columns, one GEMM per group.

ConvOps is a mixin of OpenCLBackend (backend.py), which provides rt, gemm_engine, gemm,
reshape, bias_add, bias_grad, _run1d and _scratch_tensor.
"""

from dataclasses import dataclass
from typing import Any, Optional

from ..window import Window2D, is_pointwise
from . import conv_direct
from .gemm import split_k_slices

# Convolutions with at least this many filters skip im2col (the implicit GEMM reads the patches
# from x; measured 2-3x faster on PoCL): with fewer, most of its RN-filter blocks is padding.
IMPLICIT_MIN_FILTERS = 8


def window_args(plan):
    """The window geometry arguments that conv.cl's and pool.cl's kernels take, in their order."""
    return (plan.h, plan.w, plan.c, plan.oh, plan.ow, plan.kh, plan.kw, plan.sh, plan.sw,
            plan.pad_top, plan.pad_left)


def im2col_args(plan, group=0):
    """conv.cl's im2col / col2im arguments: window_args, dilation, and the channel slice of `group`."""
    cg = plan.c // plan.groups
    return window_args(plan) + (plan.dh, plan.dw, group * cg, cg)


def is_general(plan):
    """Dilated or grouped: a geometry only the im2col path takes."""
    return plan.dh != 1 or plan.dw != 1 or plan.groups != 1


@dataclass
class OpenCLPlanScratch:
    """What the opencl backend keeps on a Window2D plan (plan.scratch_for(OpenCLPlanScratch))."""

    flipped_plan: Optional[Window2D] = None   # flipped_plan(plan)
    flipped_weight: Any = None   # CLTensor (KH, KW, F, C): the rotated filters of backward-data


def flipped_plan(plan):
    """The geometry of the convolution that computes a stride-1 convolution's input gradient
    (kept in the plan's OpenCLPlanScratch)."""
    scratch = plan.scratch_for(OpenCLPlanScratch)
    flipped = scratch.flipped_plan
    if flipped is None:
        flipped = Window2D(plan.n, plan.oh, plan.ow, plan.oc, plan.kh, plan.kw, 1, 1,
                           plan.kh - 1 - plan.pad_top, plan.kh - 1 - plan.pad_bottom,
                           plan.kw - 1 - plan.pad_left, plan.kw - 1 - plan.pad_right,
                           plan.h, plan.w, plan.c)
        scratch.flipped_plan = flipped
    return flipped


class ConvOps:
    """conv2d_forward, conv2d_backward_data and conv2d_backward_filter of OpenCLBackend."""

    def _uses_tiled(self):
        return self.gemm_engine.family == "tiled"

    def _direct(self, op, plan, flip=False):
        """The direct kernel's defines for `op` ("forward", "filter") at `plan`, or None where
        its work-group does not fit the device (then the implicit-GEMM tiles run). Cached per
        geometry and parameter set."""
        params = conv_direct.conv_params(self.gemm_engine.params)
        key = (op, flip, params and tuple(sorted(params.items())), plan.n, plan.h, plan.w,
               plan.c, plan.kh, plan.kw, plan.sh, plan.sw, plan.pad_top, plan.pad_left, plan.oh,
               plan.ow, plan.oc)
        cache = getattr(self, "_direct_defines", None)
        if cache is None:
            cache = self._direct_defines = {}
        if key not in cache:
            cache[key] = conv_direct.fitting_defines(self.rt, params, plan, op == "filter", flip)
        return cache[key]

    def _uses_implicit(self, plan):
        return (self.gemm_engine.family == "direct" and plan.oc >= IMPLICIT_MIN_FILTERS
                and not is_pointwise(plan))

    # ------------------------------------------ contract (shapes checked by contract/convolution.py)
    def _conv2d_forward(self, out, x, weight, bias, plan, precision):
        if precision is not None:   # rounded operands, then the float32 kernels
            self._rounded_conv2d_forward(out, x, weight, bias, plan, precision)
            return
        if is_general(plan):
            self._general_forward(out, x, weight, bias, plan)
            return
        if self._uses_tiled():
            defines = self._direct("forward", plan)
            if defines is not None:
                conv_direct.forward(self, out, x, weight, bias, plan, defines)
                return
            self._conv2d_tiled("conv2d_forward_tiled", plan.n * plan.oh * plan.ow, plan.oc, 1,
                               out, x, weight, weight if bias is None else bias,
                               int(bias is not None), *window_args(plan),
                               plan.n * plan.oh * plan.ow, plan.oc)
            return
        if self._uses_implicit(plan):
            self._conv2d_forward_implicit(out, x, weight, bias, plan)
            return
        cols = self._im2col(x, plan)
        rows = cols.shape[0]
        out2 = self.reshape(out, (rows, plan.oc))
        self.gemm(out2, cols, self.reshape(weight, (cols.shape[1], plan.oc)))
        if bias is not None:
            self.bias_add(out2, out2, bias)

    def _conv2d_backward_data(self, dx, dout, weight, plan, precision):
        if precision is not None:
            self._rounded_conv2d_backward_data(dx, dout, weight, plan, precision)
            return
        if is_general(plan):
            self._general_backward_data(dx, dout, weight, plan)
            return
        if self._uses_tiled():
            flipped = flipped_plan(plan) if plan.sh == plan.sw == 1 else None
            defines = None if flipped is None else self._direct("forward", flipped, flip=True)
            if defines is not None:   # a convolution of dout with the rotated filters
                conv_direct.forward(self, dx, dout, weight, None, flipped, defines)
                return
            pixels = plan.n * plan.h * plan.w
            self._conv2d_tiled("conv2d_backward_data_tiled", pixels, plan.c, 1, dx, dout, weight,
                               *window_args(plan), pixels, plan.oc)
            return
        dout2 = self.reshape(dout, (plan.n * plan.oh * plan.ow, plan.oc))
        w2 = self.reshape(weight, (plan.kh * plan.kw * plan.c, plan.oc))
        if is_pointwise(plan):
            self.gemm(self.reshape(dx, (plan.n * plan.h * plan.w, plan.c)), dout2, w2, trans_b=True)
            return
        # stride 1 and enough input channels (the rotated convolution's filters): see below
        if plan.sh == plan.sw == 1 and self._uses_implicit(flipped_plan(plan)):
            self._backward_data_as_convolution(dx, dout, weight, plan)
            return
        dcols = self._cols(plan)
        self.gemm(dcols, dout2, w2, trans_b=True)
        pixels = plan.n * plan.h * plan.w
        self._run1d("conv.cl", "col2im", pixels, dx, dcols, *im2col_args(plan), pixels)

    def _conv2d_backward_filter(self, dweight, dbias, dout, x, plan, precision):
        if precision is not None:
            self._rounded_conv2d_backward_filter(dweight, dbias, dout, x, plan, precision)
            return
        dout2 = self.reshape(dout, (plan.n * plan.oh * plan.ow, plan.oc))
        if is_general(plan):
            self._general_backward_filter(dweight, dout2, x, plan)
        elif self._uses_tiled():
            defines = self._direct("filter", plan)
            if defines is not None:
                conv_direct.backward_filter(self, dweight, dout, x, plan, defines)
            else:
                self._conv2d_backward_filter_tiled(dweight, dout, x, plan)
        elif self._uses_implicit(plan):
            self._conv2d_backward_filter_implicit(dweight, dout, x, plan)
        else:
            cols = self._im2col(x, plan)
            self.gemm(self.reshape(dweight, (cols.shape[1], plan.oc)), cols, dout2, trans_a=True)
        if dbias is not None:
            self.bias_grad(dbias, dout2)

    # ------------------------------------------------------------ im2col
    def _cols(self, plan):
        """The im2col matrix (N*OH*OW, KH*KW*C) of `plan`. Every convolution shares one scratch
        buffer (it only grows): the queue runs ops one after another, so one is enough, and
        memory holds the largest layer's matrix instead of the sum over layers."""
        return self._scratch_tensor("im2col", (plan.n * plan.oh * plan.ow, plan.kh * plan.kw * plan.c))

    def _im2col(self, x, plan):
        if is_pointwise(plan):
            return self.reshape(x, (plan.n * plan.h * plan.w, plan.c))
        cols = self._cols(plan)
        runs = cols.shape[0] * plan.kh   # one work-item per (cols row, kernel row)
        self._run1d("conv.cl", "im2col", runs, cols, x, *im2col_args(plan), runs)
        return cols

    def _backward_data_as_convolution(self, dx, dout, weight, plan):
        """dx of a stride-1 convolution is itself a convolution: dout padded by (KH-1-top,
        KH-1-bottom, KW-1-left, KW-1-right), with the filters rotated by 180 degrees and C, F
        swapped. As an implicit GEMM it costs what the forward pass costs, instead of a GEMM
        into a large dcols matrix and a col2im pass over it."""
        scratch = plan.scratch_for(OpenCLPlanScratch)
        flipped = scratch.flipped_weight
        if flipped is None:
            flipped = scratch.flipped_weight = self.rt.alloc((plan.kh, plan.kw, plan.oc, plan.c))
        taps = plan.kh * plan.kw * plan.oc
        self._run1d("conv.cl", "flip_filters", taps, flipped, weight, plan.kh, plan.kw, plan.c,
                    plan.oc, taps)
        self._conv2d_forward_implicit(dx, dout, flipped, None, flipped_plan(plan))

    # ------------------------------------------------- dilated / grouped
    def _group_cols(self, x, plan, group):
        """The im2col matrix (N*OH*OW, KH*KW*C/G) of one group's channels, with dilated taps."""
        rows, cg = plan.n * plan.oh * plan.ow, plan.c // plan.groups
        cols = self._scratch_tensor("im2col", (rows, plan.kh * plan.kw * cg))
        runs = rows * plan.kh
        self._run1d("conv.cl", "im2col", runs, cols, x, *im2col_args(plan, group), runs)
        return cols

    def _group_columns(self, name, matrix, plan, group):
        """matrix (rows, F)'s columns of `group`, (rows, F/G): matrix itself for one group,
        else a copy in scratch `name`."""
        if plan.groups == 1:
            return matrix
        fg = plan.oc // plan.groups
        part = self._scratch_tensor(name, (matrix.shape[0], fg))
        self.strided_copy(part, matrix, group * fg, (plan.oc, 1))
        return part

    def _gemm_into_group(self, target, plan, group, a, b, trans_a=False, trans_b=False):
        """target (rows, F)'s columns of `group` = op(a) @ op(b): straight into target for one
        group; else into scratch, then added into target (which the caller zeroed)."""
        if plan.groups == 1:
            self.gemm(target, a, b, trans_a=trans_a, trans_b=trans_b)
            return
        fg = plan.oc // plan.groups
        part = self._scratch_tensor("group_result", (target.shape[0], fg))
        self.gemm(part, a, b, trans_a=trans_a, trans_b=trans_b)
        self.strided_add(target, part, group * fg, (plan.oc, 1))

    def _general_forward(self, out, x, weight, bias, plan):
        out2 = self.reshape(out, (plan.n * plan.oh * plan.ow, plan.oc))
        w2 = self.reshape(weight, (plan.kh * plan.kw * (plan.c // plan.groups), plan.oc))
        if plan.groups > 1:
            self.fill(out2, 0.0)
        for g in range(plan.groups):
            self._gemm_into_group(out2, plan, g, self._group_cols(x, plan, g),
                                  self._group_columns("group_weight", w2, plan, g))
        if bias is not None:
            self.bias_add(out2, out2, bias)

    def _general_backward_data(self, dx, dout, weight, plan):
        rows, k = plan.n * plan.oh * plan.ow, plan.kh * plan.kw * (plan.c // plan.groups)
        dout2, w2 = self.reshape(dout, (rows, plan.oc)), self.reshape(weight, (k, plan.oc))
        pixels = plan.n * plan.h * plan.w
        for g in range(plan.groups):  # col2im writes group g's channels of every dx pixel
            dcols = self._scratch_tensor("im2col", (rows, k))
            self.gemm(dcols, self._group_columns("group_dout", dout2, plan, g),
                      self._group_columns("group_weight", w2, plan, g), trans_b=True)
            self._run1d("conv.cl", "col2im", pixels, dx, dcols, *im2col_args(plan, g), pixels)

    def _general_backward_filter(self, dweight, dout2, x, plan):
        dw2 = self.reshape(dweight, (plan.kh * plan.kw * (plan.c // plan.groups), plan.oc))
        if plan.groups > 1:
            self.fill(dw2, 0.0)
        for g in range(plan.groups):
            self._gemm_into_group(dw2, plan, g, self._group_cols(x, plan, g),
                                  self._group_columns("group_dout", dout2, plan, g), trans_a=True)

    # ---------------------------------------------------------- implicit
    def _conv2d_forward_implicit(self, out, x, weight, bias, plan):
        """out (N, OH, OW, F) = conv(x (N, H, W, C), weight (KH, KW, C, F)) + bias (F,) or None,
        with the direct GEMM's register blocks (no im2col matrix)."""
        engine = self.gemm_engine
        kkc, f = plan.kh * plan.kw * plan.c, plan.oc
        panels = engine.scratch("b_panels", -(-f // engine.block_cols) * kkc * engine.block_cols)
        engine.pack_b_panels(panels, weight, kkc, f)
        rows = plan.n * plan.oh * plan.ow
        global_size = (-(-f // engine.block_cols), -(-rows // engine.block_rows))
        kernel = self.rt.kernel("conv_implicit.cl", "conv2d_forward_implicit", engine.direct_defines())
        self.rt.launch(kernel, global_size, engine.direct_local_size(global_size),
                       out, x, panels, weight if bias is None else bias, int(bias is not None),
                       engine.zeros(plan.c), *window_args(plan), rows, f)

    def _conv2d_backward_filter_implicit(self, dweight, dout, x, plan):
        """dweight (KH, KW, C, F) = the filter gradient of a convolution, from its output
        gradient dout (N, OH, OW, F) and input x (N, H, W, C), summed over the output pixels
        in split-K slices (no im2col matrix)."""
        engine = self.gemm_engine
        kkc, f = plan.kh * plan.kw * plan.c, plan.oc
        rows = plan.n * plan.oh * plan.ow
        panels = -(-f // engine.block_cols)
        if f % engine.block_cols == 0:
            b, ldb, panel_stride = dout, f, engine.block_cols
        else:  # the last block would read past each row of dout: pack it into padded panels
            b = engine.scratch("b_panels", panels * rows * engine.block_cols)
            engine.pack_b_panels(b, dout, rows, f)
            ldb, panel_stride = engine.block_cols, rows * engine.block_cols
        row_blocks = -(-kkc // engine.block_rows)
        slices = split_k_slices(row_blocks * panels, rows)
        rows_per_slice = -(-rows // slices)
        target = dweight if slices == 1 else engine.scratch("split_k", slices * kkc * f)
        kernel = self.rt.kernel("conv_implicit.cl", "conv2d_backward_filter_implicit",
                                engine.direct_defines())
        self.rt.launch(kernel, (panels, row_blocks, slices), None, target, b, ldb, panel_stride,
                       x, engine.zeros(engine.block_rows), plan.h, plan.w, plan.c, plan.oh,
                       plan.ow, plan.kw, plan.sh, plan.sw, plan.pad_top, plan.pad_left, kkc, f,
                       rows, rows_per_slice, kkc * f)
        if slices > 1:
            engine.sum_slices(dweight, target, slices, kkc * f, 1.0, 0.0)

    # ------------------------------------------------------------- tiled
    def _conv2d_tiled(self, name, rows, cols, slices, *args):
        """Launch conv_tiled.cl's kernel `name` over the tiles of its rows x cols product."""
        engine = self.gemm_engine
        kernel = self.rt.kernel("conv_tiled.cl", name, engine.tiled_defines(rows, cols))
        engine.launch_tiles(kernel, rows, cols, slices, *args)

    def _conv2d_backward_filter_tiled(self, dweight, dout, x, plan):
        """dweight (KH, KW, C, F) summed over the output pixels in split-K slices when the filter
        gradient has few tiles (a GPU needs many work-groups)."""
        engine = self.gemm_engine
        kkc, f = plan.kh * plan.kw * plan.c, plan.oc
        rows = plan.n * plan.oh * plan.ow
        slices = split_k_slices(engine.tiles(kkc, f), rows)
        rows_per_slice = -(-rows // slices)
        target = dweight if slices == 1 else engine.scratch("split_k", slices * kkc * f)
        self._conv2d_tiled("conv2d_backward_filter_tiled", kkc, f, slices, target, dout, x,
                           *window_args(plan), rows, f, rows_per_slice, kkc * f)
        if slices > 1:
            engine.sum_slices(dweight, target, slices, kkc * f, 1.0, 0.0)
