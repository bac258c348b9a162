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

    # A right operand used by many products in a row (an RNN's recurrent kernel at every time
    # step): a backend may prepare it once (the cpu packs it into its micro-kernel's panels,
    # which a plain gemm redoes at every call). The operand reads b when it is packed; it is
    # valid while b is unchanged.
    def pack_gemm_b(self, b, trans_b=False, into=None):
        """op(b) (k, n), prepared for gemm_packed: a PackedGemmB. `into`, a PackedGemmB of the
        same k, n and trans_b, is packed again in place and returned (a loop that packs a
        weight at every training step allocates nothing); it no longer holds its old operand."""
        if len(b.shape) != 2:
            raise ValueError(f"pack_gemm_b: b must be 2-D, got shape {tuple(b.shape)}")
        k, n = (b.shape[1], b.shape[0]) if trans_b else b.shape
        if into is None:
            return PackedGemmB(b, bool(trans_b), k, n, self._pack_gemm_b(b, bool(trans_b), k, n, None))
        if not isinstance(into, PackedGemmB) or (into.k, into.n, into.trans_b) != (k, n, bool(trans_b)):
            raise ValueError(f"pack_gemm_b: into must be a packed operand of op(b) {(k, n)} with "
                             f"trans_b={bool(trans_b)}, got "
                             f"{(into.k, into.n, into.trans_b) if isinstance(into, PackedGemmB) else type(into).__name__}")
        into.b = b
        into.prepared = self._pack_gemm_b(b, bool(trans_b), k, n, into.prepared)
        return into

    def gemm_packed(self, out, a, packed, beta=0.0):
        """out (m, n) = a (m, k) @ op(b) + beta * out, op(b) the operand pack_gemm_b prepared;
        beta 0 never reads out."""
        if not isinstance(packed, PackedGemmB):
            raise TypeError(f"gemm_packed: packed must be what pack_gemm_b returned, got "
                            f"{type(packed).__name__}")
        if len(a.shape) != 2 or len(out.shape) != 2 or a.shape[1] != packed.k \
                or tuple(out.shape) != (a.shape[0], packed.n):
            raise ValueError(f"gemm_packed: a {tuple(a.shape)} @ the packed operand {(packed.k, packed.n)} "
                             f"does not fit out {tuple(out.shape)}")
        self._gemm_packed(out, a, packed, float(beta), a.shape[0], packed.n, packed.k)

    def _pack_gemm_b(self, b, trans_b, k, n, reuse):
        """The backend's prepared form of op(b) (in `reuse`'s storage, the form an earlier call
        returned, where that is not None); by default nothing: _gemm_packed runs gemm."""
        return None

    def _gemm_packed(self, out, a, packed, beta, m, n, k):
        self._gemm(out, a, packed.b, 1.0, beta, False, packed.trans_b, None, m, n, k)


class PackedGemmB:
    """What pack_gemm_b returns: the operand b (trans_b: its transpose is used), the product's
    sizes k and n, and `prepared`, the backend's own form of it (None where it has none)."""

    def __init__(self, b, trans_b, k, n, prepared):
        self.b, self.trans_b, self.k, self.n, self.prepared = b, trans_b, k, n, prepared
