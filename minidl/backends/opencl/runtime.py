"""The OpenCL runtime under the opencl backend: device, queue, programs, buffers, transfers.

Everything the backend does on the device goes through five calls:
`alloc`, `write` (host->device), `read` (device->host), `program` (build once,
cached) and `launch`. The only host<->device copies are `write` and `read`,
and they are counted so that a test can assert a training step makes none.
Every program is kernels/common.cl (the macros the kernel files share) followed by its own file.
"""

import contextlib
import math
import os
from importlib import resources

import numpy as np
import pyopencl as cl

from ... import settings
from .tensor import CLTensor, as_dtype

DEVICE_ENV = "MINIDL_OPENCL_DEVICE"
COMMON_SOURCE = "common.cl"
# PoCL's CPU device takes its thread count from these when the platform starts (3.x, 4.x and later)
POCL_THREAD_ENVS = ("POCL_MAX_PTHREAD_COUNT", "POCL_CPU_MAX_CU_COUNT")
# Options every program is built with. No -cl-fast-relaxed-math: all_finite and the NaN checks
# of common.cl (is_nan is x != x) must see inf and nan.
BASE_BUILD_OPTIONS = ("-cl-mad-enable",)


RECENT_LIMIT = 4096   # allocations between two drains of the queue before alloc drains it


class NoDevice(LookupError):
    """No OpenCL platform or device is installed here."""


class DeviceNotFound(LookupError):
    """MINIDL_OPENCL_DEVICE (or the spec given) names no installed device; the message lists them."""


def kernel_source(filename):
    """The text of kernels/<filename>, shipped as package data."""
    return resources.files(__package__).joinpath("kernels", filename).read_text()


def expand_includes(filename):
    """The text of kernels/<filename> with each line `#include "other.cl"` replaced by the text
    of kernels/other.cl (one level: an included file includes nothing), #line directives
    keeping the compiler's line numbers those of each file. Done here rather than by the
    compiler so that pyopencl's binary cache, keyed on the source text, sees every change."""
    lines = []
    for number, line in enumerate(kernel_source(filename).splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("#include"):
            included = stripped[len("#include"):].strip().strip('"')
            lines += ["#line 1", kernel_source(included), f"#line {number + 1}"]
        else:
            lines.append(line)
    return "\n".join(lines)


def program_source(filename):
    """What is built for kernels/<filename>: common.cl, then the file with its includes
    expanded (a #line directive keeps the compiler's line numbers those of the file)."""
    return f"{kernel_source(COMMON_SOURCE)}\n#line 1\n{expand_includes(filename)}"


def device_profile(device):
    """"gpu" or "cpu": which kernel shapes suit `device`. MINIDL_OPENCL_PROFILE decides when
    set (a GPU-shaped run on PoCL tests the GPU kernels), else the device type does (Oclgrind
    calls its device CPU|GPU|ACCELERATOR: it gets "gpu")."""
    chosen = settings.current().opencl_profile
    if chosen:
        return chosen
    return "gpu" if device.type & cl.device_type.GPU else "cpu"


def _matches(selector, index, name):
    selector = selector.strip()
    if selector.isdigit():
        return int(selector) == index
    return selector.lower() in name.lower()


def pass_thread_limit_to_pocl():
    """Give PoCL's CPU device minidl's thread count (MINIDL_NUM_THREADS), unless PoCL's own
    variables are set. It only takes effect before the first OpenCL platform query."""
    threads = settings.current().num_threads
    if threads:
        for name in POCL_THREAD_ENVS:
            os.environ.setdefault(name, str(threads))


def list_devices():
    """[(platform index, platform, device index, device)] of every installed OpenCL device;
    raises NoDevice (saying why) when there is none. Opens no context and builds nothing."""
    pass_thread_limit_to_pocl()
    try:
        platforms = cl.get_platforms()
    except cl.Error as exc:  # no ICD loader configuration: "PLATFORM_NOT_FOUND_KHR"
        platforms = []
        reason = str(exc)
    else:
        reason = "no platform listed"
    devices = []
    for p_index, platform in enumerate(platforms):
        try:
            found = platform.get_devices()
        except cl.Error:
            found = []
        devices.extend((p_index, platform, d_index, device) for d_index, device in enumerate(found))
    if not devices:
        raise NoDevice(f"no OpenCL device found ({reason})")
    return devices


def device_kind(device):
    """One of "GPU", "CPU", "accelerator", "other" (drivers may add the DEFAULT bit to any)."""
    for bit, name in ((cl.device_type.GPU, "GPU"), (cl.device_type.CPU, "CPU"),
                      (cl.device_type.ACCELERATOR, "accelerator")):
        if device.type & bit:
            return name
    return "other"


def build_options(defines=None):
    """The compiler options of a program: BASE_BUILD_OPTIONS, MINIDL_OPENCL_BUILD_OPTIONS's, then
    -D`defines` (sorted, so that a program's cache key does not depend on their order)."""
    options = list(BASE_BUILD_OPTIONS) + list(settings.current().opencl_build_options)
    options.extend(f"-D{name}={value}" for name, value in sorted((defines or {}).items()))
    return options


def describe_devices(devices):
    """One line naming each device as MINIDL_OPENCL_DEVICE selects it: "0:0 Platform / Device (CPU)"."""
    return "; ".join(f"{pi}:{di} {p.name} / {d.name} ({device_kind(d)})" for pi, p, di, d in devices)


def select_device(spec=None):
    """(platform, device) chosen by `spec` ("platform:device", each an index or a name
    substring, or one substring matched against device names); without a spec the first
    GPU of any platform, else the first device. Raises NoDevice, or DeviceNotFound when
    devices exist but `spec` matches none of them."""
    devices = list_devices()
    if spec:
        if ":" in spec:
            p_sel, d_sel = spec.split(":", 1)
            chosen = [(p, d) for pi, p, di, d in devices
                      if _matches(p_sel, pi, p.name) and _matches(d_sel, di, d.name)]
        else:
            chosen = [(p, d) for _, p, _, d in devices if _matches(spec, -1, d.name)]
        if not chosen:
            raise DeviceNotFound(
                f"{DEVICE_ENV}={spec!r} matches no OpenCL device here; the devices are: "
                f"{describe_devices(devices)}. Set {DEVICE_ENV} to \"platform:device\" (indices or "
                f"name substrings) or to a device name substring, or unset it for the first GPU, "
                f"else the first device")
        return chosen[0]
    gpus = [(p, d) for _, p, _, d in devices if d.type & cl.device_type.GPU]
    if gpus:
        return gpus[0]
    return devices[0][1], devices[0][3]


class Runtime:
    """One context and one in-order queue on one device, with a program cache and traffic counters."""

    def __init__(self, spec=None, profile=None):
        """The device chosen by `spec` (default MINIDL_OPENCL_DEVICE), its kernels shaped for
        `profile` ("cpu" or "gpu"; default: device_profile)."""
        if profile not in (None, "cpu", "gpu"):
            raise ValueError(f"opencl Runtime: profile must be 'cpu' or 'gpu', got {profile!r}")
        if spec is None:
            spec = settings.current().opencl_device
        self.platform, self.device = select_device(spec)
        self.context = cl.Context([self.device])
        self.queue = cl.CommandQueue(self.context, self.device)
        self._programs = {}   # (filename, options) -> cl.Program
        self._kernels = {}    # (filename, options, kernel name) -> cl.Kernel
        self.max_work_group_size = self.device.max_work_group_size
        self.local_mem_size = self.device.local_mem_size
        # "gpu": work-group tiles in local memory, cooperative reductions; "cpu": register
        # blocks and one work-item per row (the kernels that suit PoCL)
        self.profile = profile or device_profile(self.device)
        # Buffers allocated since the queue last drained. A pyopencl Buffer whose Python object
        # dies is released at once, and under PoCL its memory can then back a new buffer while
        # kernels queued on the old one have not run (seen with minidl.ops' per-op temporaries);
        # holding them until a blocking transfer or finish() has drained the in-order queue
        # makes that impossible. Built-in layers allocate once, so this stays small.
        self._recent = []
        self.reset_stats()

    # ------------------------------------------------------------ description
    @property
    def device_key(self):
        """A name identifying this device and driver, used to key tuning results."""
        return f"{self.platform.name} | {self.device.name} | {self.device.driver_version}"

    @property
    def device_type(self):
        """One of "GPU", "CPU", "accelerator", "other"."""
        return device_kind(self.device)

    @property
    def is_cpu(self):
        """Whether the device's type is CPU (a fact about the device: kernel choices follow
        `profile`, which MINIDL_OPENCL_PROFILE may override)."""
        return bool(self.device.type & cl.device_type.CPU)

    def info(self):
        d = self.device
        return {
            "platform": self.platform.name,
            "platform_version": self.platform.version,
            "device": d.name,
            "device_type": self.device_type,
            "profile": self.profile,
            "device_version": d.version,
            "driver_version": d.driver_version,
            "compute_units": d.max_compute_units,
            "global_memory_bytes": d.global_mem_size,
            "local_memory_bytes": d.local_mem_size,
            "max_work_group_size": d.max_work_group_size,
        }

    # ---------------------------------------------------------------- counters
    def stats(self):
        return {"h2d_count": self.h2d_count, "h2d_bytes": self.h2d_bytes,
                "d2h_count": self.d2h_count, "d2h_bytes": self.d2h_bytes}

    def reset_stats(self):
        self.h2d_count = self.h2d_bytes = self.d2h_count = self.d2h_bytes = 0

    @contextlib.contextmanager
    def uncounted(self):
        """Transfers made inside this block (the tuner's) are left out of the counters."""
        saved = (self.h2d_count, self.h2d_bytes, self.d2h_count, self.d2h_bytes)
        try:
            yield
        finally:
            self.h2d_count, self.h2d_bytes, self.d2h_count, self.d2h_bytes = saved

    # ------------------------------------------------------------------ memory
    def alloc(self, shape, dtype="float32"):
        """A new uninitialized CLTensor (buffers of at least one element: OpenCL rejects size 0)."""
        dtype = as_dtype(dtype)
        nbytes = max(int(np.prod(shape, dtype=np.int64)), 1) * dtype.itemsize
        buffer = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, nbytes)
        self._recent.append(buffer)
        if len(self._recent) > RECENT_LIMIT:
            self.finish()
        return CLTensor(buffer, shape, dtype)

    def write(self, out, array):
        """Copy the host `array` into tensor `out` (host->device, counted). Blocking, so the
        caller may reuse `array` at once."""
        array = np.ascontiguousarray(array, dtype=out.dtype)
        if array.size != out.size:
            raise ValueError(f"copy_from_host: array of shape {array.shape} does not fit "
                             f"tensor of shape {out.shape}")
        if array.size:
            cl.enqueue_copy(self.queue, out.buffer, array,
                            dst_offset=out.offset * out.dtype.itemsize, is_blocking=True)
            self._recent.clear()   # the in-order queue ran everything before this copy
        self.h2d_count += 1
        self.h2d_bytes += array.nbytes

    def read(self, x):
        """A numpy copy of tensor `x` (device->host, counted); waits for the queue."""
        array = np.empty(x.shape, dtype=x.dtype)
        if array.size:
            cl.enqueue_copy(self.queue, array, x.buffer,
                            src_offset=x.offset * x.dtype.itemsize, is_blocking=True)
            self._recent.clear()
        self.d2h_count += 1
        self.d2h_bytes += array.nbytes
        return array

    def copy(self, out, x):
        """Device-to-device copy of x into out (not a host transfer)."""
        if x.nbytes:
            cl.enqueue_copy(self.queue, out.buffer, x.buffer, byte_count=x.nbytes,
                            src_offset=x.offset * x.dtype.itemsize,
                            dst_offset=out.offset * out.dtype.itemsize)

    def finish(self):
        self.queue.finish()
        self._recent.clear()

    # ---------------------------------------------------------------- programs
    def program(self, filename, defines=None):
        """The program built from common.cl and kernels/<filename> with -D`defines`, built once
        and cached."""
        options = build_options(defines)
        key = (filename, tuple(options))
        program = self._programs.get(key)
        if program is None:
            source = program_source(filename)
            try:
                # pyopencl also keeps built binaries in its on-disk cache between processes
                program = cl.Program(self.context, source).build(options=options)
            except cl.RuntimeError as exc:
                raise RuntimeError(f"opencl backend: building kernels/{filename} with {options} "
                                   f"failed on {self.device.name}:\n{exc}") from None
            self._programs[key] = program
        return program

    def kernel(self, filename, name, defines=None):
        """Kernel `name` of kernels/<filename> (cached: one cl.Kernel object per kernel)."""
        key = (filename, tuple(sorted((defines or {}).items())), name)
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = getattr(self.program(filename, defines), name)
            self._kernels[key] = kernel
        return kernel

    def preferred_multiple(self, kernel):
        """CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE of `kernel` on this device (the warp or
        wavefront width on GPUs), at least 1."""
        info = cl.kernel_work_group_info.PREFERRED_WORK_GROUP_SIZE_MULTIPLE
        return max(1, int(kernel.get_work_group_info(info, self.device)))

    def kernel_max_group(self, kernel):
        """The largest work-group `kernel` can run with here: CL_KERNEL_WORK_GROUP_SIZE, or the
        kernel's reqd_work_group_size when larger (a build that succeeded can run it; Mesa 22.3's
        rusticl reports 32 for every kernel, its required 16 x 16 included, and runs 256)."""
        info = cl.kernel_work_group_info
        required = math.prod(kernel.get_work_group_info(info.COMPILE_WORK_GROUP_SIZE, self.device))
        return max(int(kernel.get_work_group_info(info.WORK_GROUP_SIZE, self.device)), required)

    def launch(self, kernel, global_size, local_size, *args):
        """Enqueue `kernel` (asynchronously). Tensor args pass their buffer, Python floats
        become float32 and Python ints int32; numpy scalars pass unchanged."""
        for index, arg in enumerate(args):
            if isinstance(arg, CLTensor):
                arg = arg.kernel_arg()
            elif isinstance(arg, bool):
                arg = np.int32(arg)
            elif isinstance(arg, int):
                arg = np.int32(arg)
            elif isinstance(arg, float):
                arg = np.float32(arg)
            kernel.set_arg(index, arg)
        return cl.enqueue_nd_range_kernel(self.queue, kernel, global_size, local_size)
