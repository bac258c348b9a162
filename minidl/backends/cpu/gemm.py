"""The gemm section of the contract (contract/gemm.py) on csrc/gemm.c (packing and the loops
around one micro-kernel per ISA), with precision="bfloat16" and AMX on csrc/gemm_bf16.c;
otherwise (float16, or no AMX) the operands are rounded into kept buffers
(rounded_operands.py) and the float32 kernel runs. The contract checked the shapes and the
precision; `checked` / `output` turn the C-contiguous float32 arrays into pointers."""

from ._ffi import checked, output, raise_for_status


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
