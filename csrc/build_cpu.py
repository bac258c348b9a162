"""cffi build script of the cpu backend's C kernels (API mode: a real extension module).

Every csrc/*.c file is compiled into one module, minidl._cpu_kernels. The public
prototypes of each C file live in its csrc/<name>.h header (plain declarations,
include guards allowed): this script hands them all to cffi's cdef. Headers only
used between C files go in csrc/internal/.

Every function a header declares is named minidl_*, and one order holds for arguments:
outputs, inputs, weights, scalar parameters, then sizes (status.h says more, and how errors
come back).

ISA-specific files (e.g. gemm_ukernel_avx512.c) enable their instruction set with
`#pragma GCC target(...)` at their top, so the module is built with generic flags
and runs on any x86-64; the kernels are picked at load time from cpuid.
"""

import glob
import os
import sys

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))


# Declared first: the types the other headers' prototypes use.
_FIRST_HEADERS = ("status.h", "window.h")


def _public_headers():
    paths = sorted(glob.glob(os.path.join(HERE, "*.h")))
    return sorted(paths, key=lambda p: (os.path.basename(p) not in _FIRST_HEADERS, p))


def _cdef_text(header_path):
    # cffi's cdef does not run the preprocessor: drop include guards and includes.
    lines = []
    with open(header_path) as f:
        for line in f:
            if line.lstrip().startswith("#"):
                continue
            lines.append(line)
    return "".join(lines)


ffibuilder = FFI()
ffibuilder.cdef("\n".join(_cdef_text(h) for h in _public_headers()))

# -fvisibility=hidden: the module exports only its Python entry point; the kernels are reached
# through cffi's wrappers, by the minidl_-prefixed names of the headers.
# -falign-loops=64: every loop starts on a cache line. Without it the hot GEMM and conv loops
# land wherever the sizes of the objects linked before them put them, and adding an unrelated
# kernel file moved them enough to cost 15% of a conv forward (measured on an EPYC, avx2 path).
_compile_args = ["-O3", "-std=gnu11", "-fopenmp", "-fno-math-errno", "-fvisibility=hidden", "-Wall",
                 "-Wno-unused-function", "-falign-loops=64"]
if sys.platform == "darwin":
    _compile_args.remove("-fopenmp")

ffibuilder.set_source(
    "minidl._cpu_kernels",
    "\n".join(f'#include "{os.path.basename(h)}"' for h in _public_headers()),
    sources=[os.path.relpath(p) for p in sorted(glob.glob(os.path.join(HERE, "*.c")))],
    include_dirs=[HERE],
    extra_compile_args=_compile_args,
    extra_link_args=[] if sys.platform == "darwin" else ["-fopenmp"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
