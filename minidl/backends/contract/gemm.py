"""The gemm section of the contract: BLAS's out = alpha * op(a) @ op(b) + beta * out on 2-D
tensors, in float32 or with operands rounded to a low precision. The public op checks the
shapes and the precision once; a backend implements _gemm (numpy_ops/gemm.py, cpu/gemm.py,
opencl/gemm.py), which receives the sizes m, n, k of the product."""

from .checks import check_precision


class GemmSection:
    """The contract's gemm; a backend implements _gemm."""

    # precision (gemm and the conv2d ops): None computes in float32; "bfloat16" / "float16"
    # computes as a low-precision kernel with float32 accumulation does: both operands rounded
    # to that precision (round_to_precision's rounding), their products summed in float32
    # (mixed-precision policies, minidl.mixed_precision). Biases and dbias stay float32.
    def gemm(self, out, a, b, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, precision=None):
        """out (m, n) = alpha * op(a) @ op(b) + beta * out, op(a) (m, k), op(b) (k, n), op(t) =
        t.T when trans_t. BLAS semantics: out is not read when beta is 0 (it may hold NaN)."""
        check_precision("gemm", precision)
        if len(a.shape) != 2 or len(b.shape) != 2 or len(out.shape) != 2:
            raise ValueError(f"gemm: out, a and b must be 2-D, got shapes {tuple(out.shape)}, "
                             f"{tuple(a.shape)}, {tuple(b.shape)}")
        m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
        kb, n = (b.shape[1], b.shape[0]) if trans_b else b.shape
        if k != kb or out.shape != (m, n):
            raise ValueError(f"gemm: op(a) {(m, k)} @ op(b) {(kb, n)} does not fit out {tuple(out.shape)} "
                             f"(a {tuple(a.shape)}, b {tuple(b.shape)}, trans_a={trans_a}, trans_b={trans_b})")
        self._gemm(out, a, b, float(alpha), float(beta), bool(trans_a), bool(trans_b), precision, m, n, k)
