// Definitions every kernel file shares. The runtime builds each program as this file followed
// by the kernel file (runtime.program_source), so no file copies them.

// Token pasting that expands its arguments first: CAT(float, VW) is float16 when VW is 16.
#define CAT_(x, y) x##y
#define CAT(x, y) CAT_(x, y)

// The vector type, load and store of width VW, for the files that define VW (the direct GEMM
// family's register blocks: gemm_direct.cl, conv_implicit.cl); expanded only where used.
#define floatV CAT(float, VW)
#define vloadV CAT(vload, VW)
#define vstoreV CAT(vstore, VW)

// fma where the device says it is fast (every FMA-capable CPU and GPU), else mad
#ifdef FP_FAST_FMAF
#define MAD(a, b, c) fma(a, b, c)
#else
#define MAD(a, b, c) mad(a, b, c)
#endif

// op(A)(i, k) of the GEMM operand `a` with leading dimension `lda`, for the files that define
// TRANS_A (1: a is stored (K, M) and op(A) = a.T); the compiler folds the constant test.
#define A_AT(i, k) (TRANS_A ? a[(k) * lda + (i)] : a[(i) * lda + (k)])

// NaN in, NaN out, as in numpy and IEEE arithmetic. OpenCL's fmax, fmin and clamp return the
// other operand when one is NaN (relu(NaN) would be 0 and a clipped NaN finite), so every
// kernel that takes a maximum or clips uses these instead.

// x is NaN; PoCL vectorizes this comparison across work-items but not the isnan builtin
// (a relu written with isnan ran 5x slower, measured)
int is_nan(const float x)
{
    return x != x;
}

// max(a, b), NaN when either is NaN (numpy.maximum)
float max_nan(const float a, const float b)
{
    return (a > b || is_nan(a)) ? a : b;
}

// x clipped to [lo, hi], NaN when x is NaN (numpy.clip)
float clip_nan(const float x, const float lo, const float hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}
