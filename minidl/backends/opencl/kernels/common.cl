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

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a
// counter-based generator, the four random words a pure function of (counter, key).
#define PHILOX_M0 0xD2511F53u   // round multipliers
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u   // key schedule increments (golden ratio, sqrt(3) - 1)
#define PHILOX_W1 0xBB67AE85u
#define PHILOX_ROUNDS 10

uint4 philox4x32(uint4 ctr, uint2 key)
{
    for (int round = 0; round < PHILOX_ROUNDS; ++round) {
        const uint hi0 = mul_hi(PHILOX_M0, ctr.x), lo0 = PHILOX_M0 * ctr.x;
        const uint hi1 = mul_hi(PHILOX_M1, ctr.z), lo1 = PHILOX_M1 * ctr.z;
        ctr = (uint4)(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
        key += (uint2)(PHILOX_W0, PHILOX_W1);
    }
    return ctr;
}

// Decoupled weight decay w - lr * weight_decay * w (every optimizer update), applied only when a
// decay is set, as Keras and the numpy reference do: without the test an infinite weight would
// become inf - 0 * inf = NaN where it should stay infinite.
float decayed(const float w, const float lr, const float weight_decay)
{
    return weight_decay != 0.0f ? w - lr * weight_decay * w : w;
}
