"""The opencl backend's two kernel profiles: CpuProfile and GpuProfile, one interface.

The same op suits a CPU device (PoCL: few wide cores, where a work-item's index arithmetic
costs more than a multiply-add) and a GPU (thousands of work-items in warps, local memory)
with differently shaped kernels. OpenCLBackend chooses its profile once, when it starts, from
the runtime's `profile` name (runtime.device_profile: MINIDL_OPENCL_PROFILE, else the device
type), and its ops call `self.profile.<step>` with no test of the device. Each profile has:

  name                      "cpu" or "gpu" (Runtime.profile, shown by info())
  depthwise_channel_run     channels one depthwise forward / backward-data work-item computes
  clahe_tile_area           CLAHE's largest tile (pixels) for the per-tile two-pass kernels
  equalize_chunk            Equalization's pixels per histogram work-item (0: one per pixel)
  local_size(kernel, n)     the work-group size of a one-dimensional launch of n work-items
  column_partial_sums(...)  the first pass of a per-column reduction: `count` (parts, c) partials
  reduce(...)               a two-pass reduction of a whole tensor
  bias_add, softmax_forward, softmax_cross_entropy_forward, global_avg_pool_forward/_backward,
  batchnorm_normalize, batchnorm_forward_infer, batchnorm_backward_dx
                            the kernel (and launch) each of these ops runs

The CPU profile runs one work-item per row and sums columns over row chunks; the GPU profile
runs one work-item per element and cooperative work-group reductions (group_ops.GroupOps).
Which GEMM family (and with it which convolutions) runs is not here: it is the GEMM's tuned
parameter set (gemm.default_params, tuner.py), keyed by the same profile name.
"""

from .group_ops import GroupOps

LOCAL_1D = 64            # CPU: work-group size of the one-dimensional kernels ...
MIN_GROUPS = 8           # ... shrunk so that a small launch still spreads over several groups
REDUCE_PARTS = 256       # at most this many partial sums in the first pass of a whole-tensor reduction
REDUCE_MIN_CHUNK = 1024  # elements per partial sum at the least
COLUMN_PARTS = 64        # row chunks of the first pass of a per-column reduction


class CpuProfile:
    """One work-item per row (or per pixel) and short work-groups: the kernels that suit PoCL."""

    name = "cpu"
    # 16 channels per work-item ran the MobileNetV2 layers of benchmarks/bench_depthwise.py
    # several times faster than 1 on PoCL (kernels/depthwise.cl's RUN)
    depthwise_channel_run = 16
    # CLAHE's tiles of at most this many pixels take kernels/image_equalize.cl's two passes
    # (clahe_tile_corners: a private table per tile, each pixel's four tile values written
    # beside it) instead of the global 256-level tables, which cost 256 levels per tile and
    # gathers from tables larger than the caches. On PoCL (2 cores): 2-4x faster at 4 x 4
    # tiles (keras_cnn's 32 x 32 images on Keras's 8 x 8 grid), about even from 8 x 8 to
    # 32 x 32 tiles. A work-item visits at most 9 x this many pixels (Mesa's llvmpipe stalled
    # past ~65,000 in one work-item).
    clahe_tile_area = 256
    # Equalization's histogram counts runs of this many pixels per work-item in private tables
    # (kernels/image_equalize.cl's equalize_histogram_chunks) instead of one atomic increment
    # per value: on PoCL (2 cores) the layer's forward on a 128x32x32x3 batch went from 7.9
    # to 1.3 ms.
    equalize_chunk = 4096

    def __init__(self, backend):
        self.backend = backend
        self.rt = backend.rt
        self._local_1d = min(LOCAL_1D, self.rt.max_work_group_size)

    def local_size(self, kernel, n):
        local = self._local_1d
        while local > 1 and n < local * MIN_GROUPS:
            local //= 2
        return local

    # ------------------------------------------------------------ reductions
    def column_partial_sums(self, filename, name, count, inputs, m, c):
        """Kernel `name` of `filename`(*partials, *inputs, m, c, rows_per_part, parts), one
        work-item per chunk of rows; returns the `count` (parts, c) partials and parts."""
        parts = max(1, min(COLUMN_PARTS, m))
        partials = [self.backend._scratch_tensor("column_partial" + ("" if i == 0 else f"_{i + 1}"),
                                                 (parts, c)) for i in range(count)]
        self.backend._run1d(filename, name, parts, *partials, *inputs, m, c, -(-m // parts), parts)
        return partials, parts

    def reduce(self, out, partial_kernel, finish_kernel, x_args, n, finish_args):
        """reduce.cl's partial_kernel(partial, *x_args, n, parts, chunk) over contiguous chunks,
        then finish_kernel(out, partial, parts, *finish_args) as one work-item."""
        chunk = max(REDUCE_MIN_CHUNK, -(-n // REDUCE_PARTS))
        parts = max(1, -(-n // chunk))
        partial = self.backend._scratch_tensor("reduce_partial", (parts,))
        self.backend._run1d("reduce.cl", partial_kernel, parts, partial, *x_args, n, parts, chunk)
        self.rt.launch(self.rt.kernel("reduce.cl", finish_kernel), (1,), None, out, partial,
                       parts, *finish_args)

    # ------------------------------------------------------------ per-row ops
    def bias_add(self, out, x, bias):
        rows = x.size // bias.size
        self.backend._run1d("elementwise.cl", "bias_add", rows, out, x, bias, rows, bias.size)

    def softmax_forward(self, out, x, rows, k):
        self.backend._run1d("loss.cl", "softmax_forward", rows, out, x, rows, k)

    def softmax_cross_entropy_forward(self, name, rows, k, probs, loss, logits, targets):
        self.backend._run1d("loss.cl", name, rows, probs, loss, logits, targets, rows, k)

    def global_avg_pool_forward(self, out, x):
        n, h, w, c = x.shape
        self.backend._run1d("pool.cl", "global_avg_pool_forward", n, out, x, h * w, c, n)

    def global_avg_pool_backward(self, dx, dout):
        n, h, w, c = dx.shape
        self.backend._run1d("pool.cl", "global_avg_pool_backward", n * h * w, dx, dout, h * w, c,
                            n * h * w)

    def batchnorm_normalize(self, out, x, mean, invstd, gamma, beta, m, c):
        self.backend._run1d("batchnorm.cl", "batchnorm_normalize", m, out, x, mean, invstd, gamma,
                            beta, m, c)

    def batchnorm_forward_infer(self, out, x, gamma, beta, moving_mean, moving_var, epsilon, m, c):
        self.backend._run1d("batchnorm.cl", "batchnorm_forward_infer", m, out, x, gamma, beta,
                            moving_mean, moving_var, float(epsilon), m, c)

    def batchnorm_backward_dx(self, dx, dout, x, mean, invstd, gamma, dgamma, dbeta, m, c):
        self.backend._run1d("batchnorm.cl", "batchnorm_backward_dx", m, dx, dout, x, mean, invstd,
                            gamma, dgamma, dbeta, m, c)


class GpuProfile(GroupOps):
    """One work-item per element, whole warps per work-group and cooperative reductions in local
    memory (group_ops.GroupOps): the kernels that suit a GPU."""

    name = "gpu"
    depthwise_channel_run = 1   # one element per work-item: a GPU has the work-items for it
    # CLAHE always takes the per-pixel atomic histogram and the 256-level tables (work spread
    # over every pixel); clahe_tile_corners counts a whole tile in one work-item
    clahe_tile_area = 0
    equalize_chunk = 0   # one work-item per pixel: the atomics of a GPU's many work-items

    def __init__(self, backend):
        self.backend = backend
        self.rt = backend.rt
        self._group_sizes = {}   # kernel name -> work-group size (GroupOps.group_size)

    def local_size(self, kernel, n):
        return self.group_size(kernel)   # whole warps / wavefronts, within the kernel's limits

    # ------------------------------------------------------------ reductions
    def column_partial_sums(self, filename, name, count, inputs, m, c):
        """The cooperative twin of `name` (reduce_wg.cl's `name`_wg); `filename` is the CPU
        profile's. Returns the `count` (groups, c) partials and groups."""
        return self.column_partials(name + "_wg", count, inputs, m, c)

    def reduce(self, out, partial_kernel, finish_kernel, x_args, n, finish_args):
        self.whole_reduce(out, partial_kernel, finish_kernel, x_args, n, finish_args)

    # ------------------------------------------------------------ per-element ops
    def bias_add(self, out, x, bias):
        self.per_element("bias_add_elements", x.size, out, x, bias, bias.size)

    def softmax_forward(self, out, x, rows, k):
        self.row_groups("softmax_forward_rows", rows, k, out, x)

    def softmax_cross_entropy_forward(self, name, rows, k, probs, loss, logits, targets):
        self.row_groups(name + "_rows", rows, k, probs, loss, logits, targets)

    def global_avg_pool_forward(self, out, x):
        n, h, w, c = x.shape
        self.per_element("global_avg_pool_forward_columns", n * c, out, x, h * w, c)

    def global_avg_pool_backward(self, dx, dout):
        n, h, w, c = dx.shape
        self.per_element("global_avg_pool_backward_elements", dx.size, dx, dout, h * w, c)

    def batchnorm_normalize(self, out, x, mean, invstd, gamma, beta, m, c):
        self.per_element("batchnorm_normalize_elements", x.size, out, x, mean, invstd, gamma,
                         beta, c)

    def batchnorm_forward_infer(self, out, x, gamma, beta, moving_mean, moving_var, epsilon, m, c):
        self.per_element("batchnorm_forward_infer_elements", x.size, out, x, gamma, beta,
                         moving_mean, moving_var, float(epsilon), c)

    def batchnorm_backward_dx(self, dx, dout, x, mean, invstd, gamma, dgamma, dbeta, m, c):
        self.per_element("batchnorm_backward_dx_elements", x.size, dx, dout, x, mean, invstd,
                         gamma, dgamma, dbeta, m, c)


PROFILES = {"cpu": CpuProfile, "gpu": GpuProfile}


def make_profile(backend):
    """The profile object of `backend`, for its runtime's profile name."""
    return PROFILES[backend.rt.profile](backend)
