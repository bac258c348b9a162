"""The opencl backend: the whole training step as OpenCL C kernels on one OpenCL device.

create() picks the first GPU (else the first device) or the one named by
MINIDL_OPENCL_DEVICE="platform:device" (indices or name substrings), and raises
BackendUnavailable, saying how to install one, when there is no OpenCL device.
"""

from ..base import BackendUnavailable

INSTALL_HINT = ("install the Python binding with `pip install pyopencl` and an OpenCL driver: "
                "your GPU vendor's, or on Debian/Ubuntu `apt-get install pocl-opencl-icd` "
                "for a CPU device")


def create(**options):
    """An OpenCLBackend on the selected device (options: runtime=, gemm_params=)."""
    try:
        import pyopencl
    except ImportError as exc:
        raise BackendUnavailable(f"opencl backend: pyopencl is not installed ({exc}); "
                                 f"{INSTALL_HINT}") from None
    from .backend import OpenCLBackend
    from .runtime import Runtime

    try:
        runtime = options.pop("runtime", None) or Runtime()
    except LookupError as exc:
        raise BackendUnavailable(f"opencl backend: {exc}; {INSTALL_HINT}") from None
    except pyopencl.Error as exc:  # a listed device that cannot be opened (driver trouble)
        raise BackendUnavailable(f"opencl backend: cannot open the OpenCL device: {exc}; "
                                 f"{INSTALL_HINT}") from None
    return OpenCLBackend(runtime=runtime, **options)


__all__ = ["create"]
