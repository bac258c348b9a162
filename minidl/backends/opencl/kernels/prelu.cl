// PReLU on x viewed as (rows, k) with one slope per column, alpha (k,).

// out = x > 0 ? x : alpha * x; one work-item per element (out may alias x)
__kernel void prelu_forward(__global float *out, __global const float *x, __global const float *alpha,
                            const int k, const int total)
{
    const int i = get_global_id(0);
    if (i >= total) return;
    const float v = x[i];
    out[i] = v > 0.0f ? v : alpha[i % k] * v;
}

// p = x * dout where x < 0 (its column sums are dalpha; p is the caller's dx, overwritten next)
__kernel void prelu_dalpha_terms(__global float *p, __global const float *dout, __global const float *x,
                                 const int total)
{
    const int i = get_global_id(0);
    if (i >= total) return;
    p[i] = x[i] < 0.0f ? x[i] * dout[i] : 0.0f;
}

// dx = dout (x > 0), alpha * dout (x < 0), 0 (x == 0: both halves of Keras's PReLU are flat there)
__kernel void prelu_backward_dx(__global float *dx, __global const float *dout, __global const float *x,
                                __global const float *alpha, const int k, const int total)
{
    const int i = get_global_id(0);
    if (i >= total) return;
    const float v = x[i], d = dout[i];
    dx[i] = v > 0.0f ? d : (v < 0.0f ? alpha[i % k] * d : 0.0f);
}
