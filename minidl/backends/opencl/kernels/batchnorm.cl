// Batch normalization over the last axis: x is viewed as (m, c), statistics are per column.
// Column sums use reduce.cl's layout: work-item `part` of `parts` accumulates rows
// [part * rows_per_part, (part + 1) * rows_per_part) into row `part` of a (parts, c) partial.
// Per-element kernels run one work-item per row of c channels (no per-element division).

// partial (parts, c) = sums of (x - mean)^2; x is (m, c), mean is (c,)
__kernel void batchnorm_sqdev_partial(__global float *partial, __global const float *x,
                               __global const float *mean, const int m, const int c,
                               const int rows_per_part, const int parts)
{
    const int part = get_global_id(0);
    if (part >= parts) return;
    const int begin = part * rows_per_part, end = min(m, begin + rows_per_part);
    __global float *acc = partial + (size_t)part * c;
    for (int col = 0; col < c; ++col) acc[col] = 0.0f;
    for (int row = begin; row < end; ++row) {
        __global const float *src = x + (size_t)row * c;
        for (int col = 0; col < c; ++col) {
            const float d = src[col] - mean[col];
            acc[col] += d * d;
        }
    }
}

// invstd (c,) = 1 / sqrt(var + epsilon) with the biased batch variance var = sum(partial) / m;
// moving_mean, moving_var (c,) = moving * momentum + batch * (1 - momentum)
__kernel void batchnorm_forward_train_finish(__global float *invstd, __global float *moving_mean,
                              __global float *moving_var, __global const float *mean,
                              __global const float *partial, const int parts, const int c,
                              const int m, const float momentum, const float epsilon)
{
    const int col = get_global_id(0);
    if (col >= c) return;
    float s = 0.0f;
    for (int p = 0; p < parts; ++p) s += partial[p * c + col];
    const float var = s / (float)m;
    invstd[col] = 1.0f / sqrt(var + epsilon);
    moving_mean[col] = moving_mean[col] * momentum + mean[col] * (1.0f - momentum);
    moving_var[col] = moving_var[col] * momentum + var * (1.0f - momentum);
}

// out (m, c) = gamma * (x - mean) * invstd + beta, every per-column vector (c,)
__kernel void batchnorm_normalize(__global float *out, __global const float *x, __global const float *mean,
                           __global const float *invstd, __global const float *gamma,
                           __global const float *beta, const int m, const int c)
{
    const int row = get_global_id(0);
    if (row >= m) return;
    const size_t o = (size_t)row * c;
    for (int col = 0; col < c; ++col)
        out[o + col] = gamma[col] * (x[o + col] - mean[col]) * invstd[col] + beta[col];
}

__kernel void batchnorm_forward_infer(__global float *out, __global const float *x, __global const float *gamma,
                       __global const float *beta, __global const float *moving_mean,
                       __global const float *moving_var, const float epsilon, const int m,
                       const int c)
{
    const int row = get_global_id(0);
    if (row >= m) return;
    const size_t o = (size_t)row * c;
    for (int col = 0; col < c; ++col)
        out[o + col] = gamma[col] * (x[o + col] - moving_mean[col])
                       / sqrt(moving_var[col] + epsilon) + beta[col];
}

// partial_dbeta, partial_dgamma (parts, c) = sums of dout and of dout * xhat,
// xhat = (x - mean) * invstd; dout, x are (m, c)
__kernel void batchnorm_backward_partial(__global float *partial_dbeta, __global float *partial_dgamma,
                                  __global const float *dout, __global const float *x,
                                  __global const float *mean, __global const float *invstd,
                                  const int m, const int c, const int rows_per_part,
                                  const int parts)
{
    const int part = get_global_id(0);
    if (part >= parts) return;
    const int begin = part * rows_per_part, end = min(m, begin + rows_per_part);
    __global float *sb = partial_dbeta + (size_t)part * c;
    __global float *sg = partial_dgamma + (size_t)part * c;
    for (int col = 0; col < c; ++col) sb[col] = sg[col] = 0.0f;
    for (int row = begin; row < end; ++row) {
        const size_t o = (size_t)row * c;
        for (int col = 0; col < c; ++col) {
            const float d = dout[o + col];
            sb[col] += d;
            sg[col] += d * (x[o + col] - mean[col]) * invstd[col];
        }
    }
}

// dgamma, dbeta (c,) from the partial sums
__kernel void batchnorm_backward_finish(__global float *dgamma, __global float *dbeta,
                                 __global const float *partial_dgamma,
                                 __global const float *partial_dbeta, const int parts, const int c)
{
    const int col = get_global_id(0);
    if (col >= c) return;
    float sg = 0.0f, sb = 0.0f;
    for (int p = 0; p < parts; ++p) {
        sg += partial_dgamma[p * c + col];
        sb += partial_dbeta[p * c + col];
    }
    dgamma[col] = sg;
    dbeta[col] = sb;
}

// dx = gamma * invstd / m * (m * dout - dbeta - xhat * dgamma); dx, dout, x are (m, c)
__kernel void batchnorm_backward_dx(__global float *dx, __global const float *dout, __global const float *x,
                             __global const float *mean, __global const float *invstd,
                             __global const float *gamma, __global const float *dgamma,
                             __global const float *dbeta, const int m, const int c)
{
    const int row = get_global_id(0);
    if (row >= m) return;
    const size_t o = (size_t)row * c;
    const float fm = (float)m;
    for (int col = 0; col < c; ++col) {
        const float is = invstd[col];
        const float xhat = (x[o + col] - mean[col]) * is;
        dx[o + col] = gamma[col] * is / fm * (fm * dout[o + col] - dbeta[col] - xhat * dgamma[col]);
    }
}
