// The GPU profile's twins of the kernels that run one work-item per row of c channels
// (elementwise.cl's bias_add, batchnorm.cl's normalizations, pool.cl's global average pool):
// here one work-item per element (or per (image, channel)), so that neighbouring work-items
// touch neighbouring addresses (coalesced) and a GPU gets enough of them. x is viewed as (m, c).

// out = x + bias (c,); n = m * c
__kernel void bias_add_elements(__global float *out, __global const float *x,
                                __global const float *bias, const int c, const int n)
{
    const int i = get_global_id(0);
    if (i < n) out[i] = x[i] + bias[i % c];
}

// out = gamma * (x - mean) * invstd + beta, every per-column vector (c,)
__kernel void batchnorm_normalize_elements(__global float *out, __global const float *x,
                                           __global const float *mean,
                                           __global const float *invstd,
                                           __global const float *gamma,
                                           __global const float *beta, const int c, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int col = i % c;
    out[i] = gamma[col] * (x[i] - mean[col]) * invstd[col] + beta[col];
}

__kernel void batchnorm_forward_infer_elements(__global float *out, __global const float *x,
                                               __global const float *gamma,
                                               __global const float *beta,
                                               __global const float *moving_mean,
                                               __global const float *moving_var,
                                               const float epsilon, const int c, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int col = i % c;
    out[i] = gamma[col] * (x[i] - moving_mean[col]) / sqrt(moving_var[col] + epsilon) + beta[col];
}

// dx = gamma * invstd / m * (m * dout - dbeta - xhat * dgamma), xhat = (x - mean) * invstd
__kernel void batchnorm_backward_dx_elements(__global float *dx, __global const float *dout,
                                             __global const float *x, __global const float *mean,
                                             __global const float *invstd,
                                             __global const float *gamma,
                                             __global const float *dgamma,
                                             __global const float *dbeta, const int m,
                                             const int c, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int col = i % c;
    const float fm = (float)m, is = invstd[col];
    const float xhat = (x[i] - mean[col]) * is;
    dx[i] = gamma[col] * is / fm * (fm * dout[i] - dbeta[col] - xhat * dgamma[col]);
}

// out (N, C) = mean of x (N, HW, C) over its HW positions; one work-item per (image, channel),
// n = N * C: neighbouring work-items read neighbouring channels of each pixel
__kernel void global_avg_pool_forward_columns(__global float *out, __global const float *x,
                                              const int HW, const int C, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int b = i / C, ch = i % C;
    __global const float *src = x + (size_t)b * HW * C + ch;
    float s = 0.0f;
    for (int p = 0; p < HW; ++p) s += src[(size_t)p * C];
    out[i] = s / (float)HW;
}

// dx (N, HW, C) = dout (N, C) / HW; n = N * HW * C
__kernel void global_avg_pool_backward_elements(__global float *dx, __global const float *dout,
                                                const int HW, const int C, const int n)
{
    const int i = get_global_id(0);
    if (i < n) dx[i] = dout[(i / (HW * C)) * C + i % C] / (float)HW;
}
