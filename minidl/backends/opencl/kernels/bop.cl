// larq's Bop update on binary weights (csrc/bop.h says the same for the cpu backend):
//     m += gamma (g - m);   w = sign(-sign(w m - threshold) w),  sign(0) = +1, NaN kept
// one work-item per element. No tunables.

// Contraction off: m + gamma (g - m) and w m - threshold are rounded after each multiply as
// numpy and the cpu backend compute them, so every backend takes the same flip decisions.
#pragma OPENCL FP_CONTRACT OFF

__kernel void bop_update(__global float *w, __global const float *g, __global float *m,
                         const float gamma, const float threshold, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float wi = w[i];
    const float mi = m[i] + gamma * (g[i] - m[i]);
    const float d = wi * mi - threshold;
    // t = -sign(d) w; d == 0 gives 0, a NaN d stays NaN (OpenCL's sign() would give 0). The
    // NaN tests are explicit: a compiler may fold d * 0 to 0 (Mesa's llvmpipe does)
    const float t = isnan(d) ? d : (d > 0.0f ? -wi : (d < 0.0f ? wi : 0.0f));
    m[i] = mi;
    w[i] = isnan(t) ? t : (t >= 0.0f ? 1.0f : -1.0f);
}
