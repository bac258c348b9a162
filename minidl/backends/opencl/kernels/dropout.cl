// Dropout with the counter-based generator philox4x32 of common.cl. The random words for
// element i depend only on (seed, i), so a mask is reproducible on any device and any launch
// geometry. Work-item t draws one Philox block
// (counter = t) and uses its four 32-bit words for elements 4t .. 4t+3.

// mask (n,) = keep / (1 - rate) with keep = (uniform >= rate); out (n,) = x * mask.
// keep_scale = 1 / (1 - rate); the seed is split in two 32-bit halves.
__kernel void dropout_forward(__global float *out, __global float *mask, __global const float *x,
                              const float rate, const float keep_scale, const uint seed_lo,
                              const uint seed_hi, const int n)
{
    const int t = get_global_id(0);
    const int first = 4 * t;
    if (first >= n) return;
    const uint4 bits = philox4x32((uint4)((uint)t, 0u, 0u, 0u), (uint2)(seed_lo, seed_hi));
    const uint words[4] = {bits.x, bits.y, bits.z, bits.w};
    for (int j = 0; j < 4 && first + j < n; ++j) {
        const float uniform = (float)(words[j] >> 8) * (1.0f / 16777216.0f);  // 24 bits in [0, 1)
        const float m = uniform >= rate ? keep_scale : 0.0f;
        mask[first + j] = m;
        out[first + j] = x[first + j] * m;
    }
}

// GaussianNoise: out (n,) = x + stddev * z, z ~ N(0, 1) by Box-Muller. Work-item t draws counter t
// and makes elements 4t .. 4t+3 from its two word pairs: u1 in (0, 1] (never log 0), u2 in [0, 1).
__kernel void gaussian_noise(__global float *out, __global const float *x, const float stddev,
                             const uint seed_lo, const uint seed_hi, const int n)
{
    const int t = get_global_id(0);
    const int first = 4 * t;
    if (first >= n) return;
    const uint4 bits = philox4x32((uint4)((uint)t, 0u, 0u, 0u), (uint2)(seed_lo, seed_hi));
    // straight-line, no private arrays: PoCL then runs work-items as vector lanes (the
    // loops over arrays of the first version ran one work-item at a time)
    const float u1a = (float)((bits.x >> 8) + 1u) * (1.0f / 16777216.0f);
    const float u2a = (float)(bits.y >> 8) * (1.0f / 16777216.0f);
    const float u1b = (float)((bits.z >> 8) + 1u) * (1.0f / 16777216.0f);
    const float u2b = (float)(bits.w >> 8) * (1.0f / 16777216.0f);
    const float ra = sqrt(-2.0f * log(u1a)), rb = sqrt(-2.0f * log(u1b));
    const float4 z = (float4)(ra * cospi(2.0f * u2a), ra * sinpi(2.0f * u2a),
                              rb * cospi(2.0f * u2b), rb * sinpi(2.0f * u2b));
    if (first + 4 <= n) {
        vstore4(vload4(t, x) + stddev * z, t, out);
        return;
    }
    out[first] = x[first] + stddev * z.x;   // the last, partial group of four
    if (first + 1 < n) out[first + 1] = x[first + 1] + stddev * z.y;
    if (first + 2 < n) out[first + 2] = x[first + 2] + stddev * z.z;
}

// SpatialDropout2D: out (n, k, c) = x * mask (n, c) broadcast over k; one work-item per element
__kernel void channel_mask_multiply(__global float *out, __global const float *x,
                                    __global const float *mask, const int k, const int c, const int total)
{
    const int i = get_global_id(0);
    if (i >= total) return;
    const int sample = i / (k * c), channel = i % c;
    out[i] = x[i] * mask[sample * c + channel];
}
