"""The gemm section of the contract (contract/gemm.py) on csrc/gemm.c (packing and the loops
around one micro-kernel per ISA), with precision="bfloat16" and AMX on csrc/gemm_bf16.c;
otherwise (float16, or no AMX) the operands are rounded into kept buffers
(rounded_operands.py) and the float32 kernel runs. The contract checked the shapes and the
precision; `checked` / `output` turn the C-contiguous float32 arrays into pointers."""

import numpy as np

from ._ffi import checked, ffi, output, raise_for_status


class CpuGemmOps:
    """Mixin of CpuBackend: gemm."""

    def _gemm(self, out, a, b, alpha, beta, trans_a, trans_b, precision, m, n, k):
        lib = self._lib
        kernel = lib.minidl_sgemm
        if precision == "bfloat16" and lib.minidl_bf16_native():
            kernel = lib.minidl_gemm_bf16
        elif precision is not None:
            a, b = self._rounded("gemm", "a", a, precision), self._rounded("gemm", "b", b, precision)
        pa, pb, pout = checked("gemm", "a", a), checked("gemm", "b", b), output("gemm", "out", out)
        status = kernel(pout, pa, pb, alpha, beta, int(trans_a), int(trans_b), m, n, k, max(a.shape[1], 1),
                        max(b.shape[1], 1), max(n, 1))
        if status:
            raise_for_status("gemm", status, f"op(a) {(m, k)} @ op(b) {(k, n)}")

    def _pack_gemm_b(self, b, trans_b, k, n, reuse):
        """(the 64-byte aligned panels of op(b), the index of the micro-kernel they are laid
        out for): csrc/gemm.c's minidl_sgemm_pack_b; into reuse's panels when given."""
        lib = self._lib
        if reuse is None:
            floats = int(lib.minidl_sgemm_packed_b_floats(k, n))
            raw = np.empty(floats + 16, np.float32)          # the panels' aligned loads need 64 bytes
            offset = (-raw.ctypes.data % 64) // 4
            panels = raw[offset:offset + floats]
        else:
            panels = reuse[0]
        kernel = ffi.new("int *")
        status = lib.minidl_sgemm_pack_b(ffi.cast("float *", panels.ctypes.data), kernel,
                                         checked("pack_gemm_b", "b", b), int(trans_b), k, n, max(b.shape[1], 1))
        if status:
            raise_for_status("pack_gemm_b", status, f"op(b) {(k, n)}")
        return panels, kernel[0]

    def _gemm_packed(self, out, a, packed, beta, m, n, k):
        panels, kernel = packed.prepared
        status = self._lib.minidl_sgemm_packed(
            output("gemm_packed", "out", out), checked("gemm_packed", "a", a),
            ffi.cast("float *", panels.ctypes.data), beta, kernel, m, n, k, max(k, 1), max(n, 1))
        if status:
            raise_for_status("gemm_packed", status, f"a {(m, k)} @ the packed operand {(k, n)}")
