// BatchNormalization + sign folded into an integer threshold (csrc/binary_threshold.h has the
// layouts): bit b of word k is 1 (-1) where z[p, 32 k + b] lies outside [lo, hi] of its
// channel. One work-item per output word. No tunables.

// bits (pixels, cw) from z (pixels, c) and bounds (2, c): lo then hi
__kernel void binary_pack_thresholds(__global uint *bits, __global const float *z, __global const float *bounds,
                                     const int c, const int cw, const int total)
{
    const int i = get_global_id(0);
    if (i >= total) return;
    const int p = i / cw, k = i % cw;
    const int end = min(32, c - 32 * k);
    __global const float *row = z + (long)p * c + 32 * k;
    __global const float *lo = bounds + 32 * k, *hi = bounds + c + 32 * k;
    uint word = 0;
    for (int b = 0; b < end; b++) word |= (uint)(!(lo[b] <= row[b] && row[b] <= hi[b])) << b;
    bits[i] = word;
}
