"""The GPU profile's reductions and per-row ops of the opencl backend: work-groups that
cooperate through local-memory tree sums (kernels/reduce_wg.cl; softmax rows in loss_wg.cl) and
kernels with one work-item per element (kernels/per_element.cl), where the CPU profile runs one
work-item per row.

GroupOps is the base of profiles.GpuProfile, which provides rt, backend (the OpenCLBackend
whose _run1d and _scratch_tensor these use) and _group_sizes (a dict).
Work-group sizes come from the device: a power of two no larger than GROUP_MAX, the kernel's
CL_KERNEL_WORK_GROUP_SIZE or the device's limit, and at least its preferred multiple where
those allow; the local memory each launch asks for is checked against CL_DEVICE_LOCAL_MEM_SIZE.
"""

import pyopencl as cl

GROUP_MAX = 256      # work-items per group of the reductions and per-element kernels
COLUMN_LANES = 32    # columns per work-group of a column reduction (the coalesced axis), at most
ROW_GROUPS = 64      # groups along the rows of a column reduction: its partial has this many rows
WHOLE_GROUPS = 256   # groups of the first pass of a whole-tensor reduction, at most


def _floor_pow2(n):
    return 1 << (max(1, int(n)).bit_length() - 1)


class GroupOps:
    """Cooperative reductions and per-element kernels of OpenCLBackend's GPU profile."""

    def _kernel(self, filename, name):
        return self.rt.kernel(filename, name)

    def group_size(self, kernel):
        """The work-group size of a one-dimensional launch of `kernel` (a power of two)."""
        sizes = self._group_sizes
        size = sizes.get(kernel.function_name)
        if size is None:
            limit = min(GROUP_MAX, self.rt.max_work_group_size, self.rt.kernel_max_group(kernel))
            size = _floor_pow2(limit)
            multiple = self.rt.preferred_multiple(kernel)
            if size % multiple and multiple <= limit:  # keep whole warps / wavefronts
                size = _floor_pow2(limit // multiple * multiple)
            sizes[kernel.function_name] = size
        return size

    def _local_floats(self, count):
        """Local memory of `count` floats for a launch argument, checked against the device."""
        if 4 * count > self.rt.local_mem_size:
            raise RuntimeError(f"opencl: a reduction needs {4 * count} bytes of local memory, the "
                               f"device has {self.rt.local_mem_size}")
        return cl.LocalMemory(4 * count)

    # ---------------------------------------------------------- columns
    def column_pass(self, name, outputs, inputs, m, c):
        """reduce_wg.cl's column kernel `name`(*outputs, *inputs, m, c, scratch) over x (m, c):
        each output a (groups, c) partial; returns groups (the partial's rows)."""
        kernel = self._kernel("reduce_wg.cl", name)
        size = self.group_size(kernel)
        lanes = min(COLUMN_LANES, size, _floor_pow2(2 * c - 1))  # c rounded up to a power of two
        rows = size // lanes
        groups = max(1, min(ROW_GROUPS, -(-m // rows)))
        self.rt.launch(kernel, (-(-c // lanes) * lanes, groups * rows), (lanes, rows),
                       *outputs, *inputs, m, c, self._local_floats(size))
        return groups

    def column_partials(self, name, count, inputs, m, c):
        """`count` partial tensors (groups, c) filled by column_pass(name, ...), and groups."""
        held = [self.backend._scratch_tensor(f"column_partial_wg_{i}", (ROW_GROUPS, c))
                for i in range(count)]
        groups = self.column_pass(name, held, inputs, m, c)
        return held, groups

    # ------------------------------------------------------ whole tensor
    def whole_reduce(self, out, partial_kernel, finish_kernel, x_args, n, finish_args):
        """Two cooperative passes over n items: reduce_wg.cl's `partial_kernel` + "_wg" into one
        partial per group, then `finish_kernel` + "_wg" as one work-group."""
        first = self._kernel("reduce_wg.cl", partial_kernel + "_wg")
        size = self.group_size(first)
        groups = max(1, min(WHOLE_GROUPS, -(-n // size)))
        partial = self.backend._scratch_tensor("reduce_partial", (groups,))
        self.rt.launch(first, (groups * size,), (size,), partial, *x_args, n,
                       self._local_floats(size))
        finish = self._kernel("reduce_wg.cl", finish_kernel + "_wg")
        size = self.group_size(finish)
        self.rt.launch(finish, (size,), (size,), out, partial, groups, *finish_args,
                       self._local_floats(size))

    # ---------------------------------------------------------- rows
    def row_groups(self, name, rows, k, *args):
        """loss_wg.cl's kernel `name`(*args, rows, k, scratch): one work-group per row of k
        columns, as many work-items as k needs up to the group size."""
        kernel = self._kernel("loss_wg.cl", name)
        lanes = min(self.group_size(kernel), _floor_pow2(2 * k - 1))
        self.rt.launch(kernel, (rows * lanes,), (lanes,), *args, rows, k,
                       self._local_floats(lanes))

    # -------------------------------------------------- per element
    def per_element(self, name, n, *args):
        """per_element.cl's kernel `name` over n work-items (its last argument is n)."""
        self.backend._run1d("per_element.cl", name, n, *args, n)
