// Batch normalization over the last axis: x is viewed as (m, c), statistics are per column.
// Column sums use the same (parts, c) partial layout as reduce.cl's colsum_partial:
// work-item (col, part) handles rows [part * rows_per_part, (part + 1) * rows_per_part).

// partial (parts, c) = sums of (x - mean)^2; x is (m, c), mean is (c,)
__kernel void bn_sqdev_partial(__global float *partial, __global const float *x,
                               __global const float *mean, const int m, const int c,
                               const int rows_per_part)
{
    const int col = get_global_id(0);
    const int part = get_global_id(1);
    if (col >= c) return;
    const int end = min(m, (part + 1) * rows_per_part);
    const float mu = mean[col];
    float s = 0.0f;
    for (int row = part * rows_per_part; row < end; ++row) {
        const float d = x[row * c + col] - mu;
        s += d * d;
    }
    partial[part * c + col] = s;
}

// invstd (c,) = 1 / sqrt(var + epsilon) with the biased batch variance var = sum(partial) / m;
// moving_mean, moving_var (c,) = moving * momentum + batch * (1 - momentum)
__kernel void bn_finish_train(__global float *invstd, __global float *moving_mean,
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

// out (n,) = gamma * (x - mean) * invstd + beta, every per-column vector (c,)
__kernel void bn_normalize(__global float *out, __global const float *x, __global const float *mean,
                           __global const float *invstd, __global const float *gamma,
                           __global const float *beta, const int n, const int c)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int col = i % c;
    out[i] = gamma[col] * (x[i] - mean[col]) * invstd[col] + beta[col];
}

__kernel void bn_infer(__global float *out, __global const float *x, __global const float *gamma,
                       __global const float *beta, __global const float *moving_mean,
                       __global const float *moving_var, const float epsilon, const int n,
                       const int c)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int col = i % c;
    out[i] = gamma[col] * (x[i] - moving_mean[col]) / sqrt(moving_var[col] + epsilon) + beta[col];
}

// partial_dbeta, partial_dgamma (parts, c) = sums of dout and of dout * xhat,
// xhat = (x - mean) * invstd; dout, x are (m, c)
__kernel void bn_backward_partial(__global float *partial_dbeta, __global float *partial_dgamma,
                                  __global const float *dout, __global const float *x,
                                  __global const float *mean, __global const float *invstd,
                                  const int m, const int c, const int rows_per_part)
{
    const int col = get_global_id(0);
    const int part = get_global_id(1);
    if (col >= c) return;
    const int end = min(m, (part + 1) * rows_per_part);
    const float mu = mean[col], is = invstd[col];
    float sb = 0.0f, sg = 0.0f;
    for (int row = part * rows_per_part; row < end; ++row) {
        const float d = dout[row * c + col];
        sb += d;
        sg += d * (x[row * c + col] - mu) * is;
    }
    partial_dbeta[part * c + col] = sb;
    partial_dgamma[part * c + col] = sg;
}

// dgamma, dbeta (c,) from the partial sums
__kernel void bn_backward_finish(__global float *dgamma, __global float *dbeta,
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

// dx = gamma * invstd / m * (m * dout - dbeta - xhat * dgamma); dx, dout, x are (n,) = (m, c)
__kernel void bn_backward_dx(__global float *dx, __global const float *dout, __global const float *x,
                             __global const float *mean, __global const float *invstd,
                             __global const float *gamma, __global const float *dgamma,
                             __global const float *dbeta, const int n, const int c, const int m)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int col = i % c;
    const float is = invstd[col];
    const float xhat = (x[i] - mean[col]) * is;
    dx[i] = gamma[col] * is / (float)m * ((float)m * dout[i] - dbeta[col] - xhat * dgamma[col]);
}
