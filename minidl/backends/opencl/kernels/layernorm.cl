// Layer normalization over the last axis: x is (rows, c), statistics per row, gamma / beta per
// column. One work-item per row (rows are independent; c is a layer's width, short enough for
// one work-item's loop); dgamma / dbeta are column sums, done by reduce.cl's colsum kernels.
// centered 0 is Keras's rms_scaling: x * invstd * gamma + beta, the same statistics.

__kernel void layernorm_forward(__global float *out, __global float *mean, __global float *invstd,
                                __global const float *x, __global const float *gamma,
                                __global const float *beta, const float epsilon, const int centered,
                                const int rows, const int c)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    __global const float *xr = x + (size_t)r * c;
    __global float *outr = out + (size_t)r * c;
    float s = 0.0f;
    for (int j = 0; j < c; ++j) s += xr[j];
    const float m = s / (float)c;
    float q = 0.0f;
    for (int j = 0; j < c; ++j) q += (xr[j] - m) * (xr[j] - m);
    const float is = 1.0f / sqrt(q / (float)c + epsilon);
    mean[r] = m;
    invstd[r] = is;
    const float shift = centered ? m : 0.0f;
    for (int j = 0; j < c; ++j) outr[j] = (xr[j] - shift) * is * gamma[j] + beta[j];
}

// p = dout * xhat (x * invstd uncentered), whose column sums are dgamma (p is the caller's dx,
// overwritten next)
__kernel void layernorm_dout_xhat(__global float *p, __global const float *dout, __global const float *x,
                                  __global const float *mean, __global const float *invstd,
                                  const int centered, const int rows, const int c)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    const size_t o = (size_t)r * c;
    const float m = centered ? mean[r] : 0.0f, is = invstd[r];
    for (int j = 0; j < c; ++j) p[o + j] = dout[o + j] * (x[o + j] - m) * is;
}

// dx = invstd * (g - mean(g) - xhat * mean(g * xhat)), g = dout * gamma; uncentered
// dx = invstd * (g - xhat * mean(g * x * invstd))
__kernel void layernorm_backward_dx(__global float *dx, __global const float *dout, __global const float *x,
                                    __global const float *mean, __global const float *invstd,
                                    __global const float *gamma, const int centered, const int rows,
                                    const int c)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    const float m = mean[r], is = invstd[r], shift = centered ? m : 0.0f;
    const size_t o = (size_t)r * c;
    float sg = 0.0f, sgx = 0.0f;
    for (int j = 0; j < c; ++j) {
        const float g = dout[o + j] * gamma[j];
        sg += g;
        sgx += g * (x[o + j] - shift) * is;
    }
    const float a = centered ? sg / (float)c : 0.0f, b = sgx / (float)c;
    for (int j = 0; j < c; ++j) dx[o + j] = is * (dout[o + j] * gamma[j] - a - (x[o + j] - m) * is * b);
}
