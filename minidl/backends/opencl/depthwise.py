"""The depthwise convolution ops of the opencl backend, on kernels/depthwise.cl: one work-item
per output element (forward), per input element (backward-data, a gather) and per weight
element and slice of output rows (backward-filter, whose slices a second kernel sums).

DepthwiseOps is a mixin of OpenCLBackend (backend.py), which provides _run1d,
_scratch_tensor and profile (whose depthwise_channel_run is the channels one forward /
backward-data work-item computes, kernels/depthwise.cl's RUN).
"""

from ..depthwise_geometry import multiplier
from .conv import window_args

# Output rows (of N * OH) one backward-filter work-item sums: fewer rows mean more work-items
# (and more partial sums to add). 16 rows of a 56-wide MobileNetV2 layer are ~900 products.
FILTER_SLICE_ROWS = 16


class DepthwiseOps:
    """The depthwise section's implementations of OpenCLBackend (contract/depthwise.py checked
    every tensor against the plan)."""

    def _run_define(self):
        return {"RUN": self.profile.depthwise_channel_run}

    def _runs(self, channels):
        """Work-items per pixel: runs of RUN channels."""
        return -(-channels // self.profile.depthwise_channel_run)

    def _depthwise_conv2d_forward(self, out, x, weight, bias, plan):
        n = plan.n * plan.oh * plan.ow * self._runs(plan.oc)
        self._run1d("depthwise.cl", "depthwise_conv2d_forward", n, out, x, weight,
                    weight if bias is None else bias, int(bias is not None), *window_args(plan),
                    multiplier(plan), n, defines=self._run_define())

    def _depthwise_conv2d_backward_data(self, dx, dout, weight, plan):
        n = plan.n * plan.h * plan.w * self._runs(plan.c)
        self._run1d("depthwise.cl", "depthwise_conv2d_backward_data", n, dx, dout, weight,
                    *window_args(plan), multiplier(plan), n, defines=self._run_define())

    def _depthwise_conv2d_backward_filter(self, dweight, dbias, dout, x, plan):
        rows = plan.n * plan.oh
        slices = -(-rows // FILTER_SLICE_ROWS)
        taps = plan.kh * plan.kw * plan.oc
        part = taps + plan.oc
        partials = self._scratch_tensor("depthwise_filter_partials", (slices, part))
        self._run1d("depthwise.cl", "depthwise_conv2d_filter_partial", slices * part, partials, dout, x,
                    *window_args(plan), multiplier(plan), FILTER_SLICE_ROWS, rows, slices * part)
        self._run1d("depthwise.cl", "depthwise_conv2d_filter_sum", part, dweight,
                    dweight if dbias is None else dbias, int(dbias is not None), partials, slices,
                    taps, part)
