// Local-memory tree reductions of the GPU profile's cooperative kernels (reduce_wg.cl,
// loss_wg.cl include this). NAME(scratch, base, lane, count, stride, v) combines v over the
// `count` (a power of two) work-items lane = 0 .. count - 1 that share `base`, their values
// `stride` floats apart in scratch, in a fixed order (deterministic); every work-item of the
// group must call it, and all get the result.
#define TREE_REDUCTION(NAME, COMBINE)                                                  \
float NAME(__local float *scratch, const int base, const int lane, const int count,    \
           const int stride, const float v)                                            \
{                                                                                      \
    scratch[base + lane * stride] = v;                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                                      \
    for (int step = count / 2; step > 0; step /= 2) {                                  \
        if (lane < step) {                                                             \
            const float a = scratch[base + lane * stride];                             \
            const float b = scratch[base + (lane + step) * stride];                    \
            scratch[base + lane * stride] = COMBINE;                                   \
        }                                                                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                                  \
    }                                                                                  \
    const float total = scratch[base];                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);  /* scratch may be reused at once */                 \
    return total;                                                                      \
}

TREE_REDUCTION(tree_sum, a + b)
TREE_REDUCTION(tree_max_nan, max_nan(a, b))   // NaN when any value is (common.cl's max_nan)
