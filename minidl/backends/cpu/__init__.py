"""The cpu backend: numpy arrays in host memory, every compute op in hand-vectorized C
(minidl._cpu_kernels, built from csrc/ by setup.py)."""

from ._ffi import require_lib


def create(**options):
    """The registry's entry point; raises BackendUnavailable when the C extension is not built."""
    require_lib()
    from .backend import CpuBackend

    return CpuBackend(**options)


__all__ = ["create"]
