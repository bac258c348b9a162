"""The int8 ops object of a backend (minidl/backends/quantized_ops.py's contract), one per backend."""

_OPS = {}


def for_backend(backend):
    ops = _OPS.get(id(backend))
    if ops is None or ops.backend is not backend:
        if backend.name == "cpu":
            from ..backends.cpu.quantized_ops import CpuQuantizedOps as cls
        elif backend.name == "opencl":
            from ..backends.opencl.quantized_ops import OpenCLQuantizedOps as cls
        elif backend.name == "numpy":
            from ..backends.quantized_ops import QuantizedOps as cls
        else:
            raise ValueError(f"minidl.quantization: the {backend.name!r} backend has no int8 ops "
                             "(numpy, cpu and opencl have)")
        ops = _OPS[id(backend)] = cls(backend)
    return ops
