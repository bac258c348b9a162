"""The opencl backend: the whole training step as OpenCL C kernels on one OpenCL device.

create() picks the first GPU (else the first device) or the one named by
MINIDL_OPENCL_DEVICE="platform:device" (indices or name substrings). It raises
BackendUnavailable saying how to install pyopencl and a driver when either is missing,
and listing the devices when MINIDL_OPENCL_DEVICE matches none of them.
unavailable_reason() makes the same checks without opening the device: listing the
backends builds no kernel and tunes nothing (the GEMM is tuned on its first use).
"""

from ..base import BackendUnavailable

# pyopencl comes with `pip install -e .`; the driver (an ICD) is a system package.
DRIVER_HINT = ("install an OpenCL driver (an ICD): your GPU vendor's, or on Debian/Ubuntu "
               "`apt-get install pocl-opencl-icd` for a CPU device (`clinfo -l` lists what is "
               "installed); the cpu and numpy backends need none")
INSTALL_HINT = f"install the Python binding with `pip install pyopencl`, and {DRIVER_HINT}"


def _import_pyopencl():
    try:
        import pyopencl
    except ImportError as exc:
        raise BackendUnavailable(f"opencl backend: pyopencl is not installed ({exc}); "
                                 f"{INSTALL_HINT}") from None
    return pyopencl


def _unavailable(exc):
    """The BackendUnavailable for a device look-up that failed with `exc`."""
    from .runtime import DeviceNotFound

    if isinstance(exc, DeviceNotFound):  # pyopencl and a driver are there: the selector is wrong
        return BackendUnavailable(f"opencl backend: {exc}")
    # pyopencl imported, so only the driver is missing
    return BackendUnavailable(f"opencl backend: {exc}; {DRIVER_HINT}")


def unavailable_reason():
    """None if create() would find its device, else why not; cheap (lists the devices only)."""
    try:
        _import_pyopencl()
        from ... import settings
        from .runtime import select_device

        select_device(settings.current().opencl_device)
    except BackendUnavailable as exc:
        return str(exc)
    except LookupError as exc:
        return str(_unavailable(exc))
    return None


def create(**options):
    """An OpenCLBackend on the selected device (options: runtime=, gemm_params=)."""
    pyopencl = _import_pyopencl()
    from .backend import OpenCLBackend
    from .runtime import Runtime

    try:
        runtime = options.pop("runtime", None) or Runtime()
    except LookupError as exc:
        raise _unavailable(exc) from None
    except pyopencl.Error as exc:  # a listed device that cannot be opened (driver trouble)
        raise BackendUnavailable(f"opencl backend: cannot open the OpenCL device: {exc}; "
                                 f"{DRIVER_HINT}") from None
    return OpenCLBackend(runtime=runtime, **options)


__all__ = ["create", "unavailable_reason"]
