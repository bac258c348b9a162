"""The gemm section of the contract (contract/gemm.py) in numpy: the reference the C and
OpenCL kernels are tested against. Low precision rounds the operands first
(rounded_operands.py), as every backend without a native kernel does."""


class NumpyGemmOps:
    """Mixin of NumpyBackend: gemm (the contract checked the shapes and the precision)."""

    def _gemm(self, out, a, b, alpha, beta, trans_a, trans_b, precision, m, n, k):
        a, b = self._rounded("gemm", "a", a, precision), self._rounded("gemm", "b", b, precision)
        product = (a.T if trans_a else a) @ (b.T if trans_b else b)
        if alpha != 1.0:
            product *= alpha
        if beta == 0.0:
            # BLAS semantics: out is not read when beta is 0 (it may hold garbage or NaN)
            out[...] = product
        else:
            out[...] = product + beta * out
