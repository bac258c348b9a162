/* Batch normalization: column reductions (column_reduce.c) and one per-channel affine pass. */
#include <math.h>

#include "batchnorm.h"
#include "internal/column_reduce.h"
#include "internal/parallel.h"
#include "internal/vector_kernels.h"

/* out (rows, c) = x * scale + shift, per channel */
static void scale_shift(float *out, const float *x, const float *scale, const float *shift, int64_t rows,
                        int64_t c)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    int64_t step = minidl_rows_per_block(c);
#pragma omp parallel for schedule(static) if (rows * c >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t r0 = 0; r0 < rows; r0 += step) {
        int64_t nr = rows - r0 < step ? rows - r0 : step;
        vk->rows_scale_shift(out + r0 * c, x + r0 * c, scale, shift, nr, c);
    }
}

/* scale = gamma * invstd and shift = beta - mean * scale, gamma / beta NULL meaning 1 / 0 */
static void fold_affine(float *scale, float *shift, const float *mean, const float *invstd,
                        const float *gamma, const float *beta, int64_t c)
{
    for (int64_t j = 0; j < c; j++) {
        scale[j] = gamma ? gamma[j] * invstd[j] : invstd[j];
        shift[j] = (beta ? beta[j] : 0.0f) - mean[j] * scale[j];
    }
}

void minidl_batchnorm_forward_train(float *out, float *mean, float *invstd, float *moving_mean,
                                    float *moving_var, const float *x, const float *gamma, const float *beta,
                                    float momentum, float epsilon, int64_t rows, int64_t c, float *scratch)
{
    float *var = scratch + 2 * MINIDL_COLUMN_CHUNKS * c; /* var, scale, shift are (c) */
    float *scale = var + c, *shift = scale + c;
    double inv_rows = rows > 0 ? 1.0 / (double)rows : 0.0;
    minidl_column_reduce(mean, NULL, COLUMN_SUM, x, NULL, NULL, rows, c, inv_rows, scratch);
    minidl_column_reduce(var, NULL, COLUMN_SQ_DEV, x, NULL, mean, rows, c, inv_rows, scratch);
    for (int64_t j = 0; j < c; j++) {
        invstd[j] = (float)(1.0 / sqrt((double)var[j] + epsilon));
        moving_mean[j] = moving_mean[j] * momentum + mean[j] * (1.0f - momentum);
        moving_var[j] = moving_var[j] * momentum + var[j] * (1.0f - momentum);
    }
    fold_affine(scale, shift, mean, invstd, gamma, beta, c);
    scale_shift(out, x, scale, shift, rows, c);
}

void minidl_batchnorm_forward_infer(float *out, const float *x, const float *gamma, const float *beta,
                                    const float *moving_mean, const float *moving_var, float epsilon,
                                    int64_t rows, int64_t c, float *scratch)
{
    float *invstd = scratch, *scale = scratch + c, *shift = scratch + 2 * c; /* each (c) */
    for (int64_t j = 0; j < c; j++) invstd[j] = (float)(1.0 / sqrt((double)moving_var[j] + epsilon));
    fold_affine(scale, shift, moving_mean, invstd, gamma, beta, c);
    scale_shift(out, x, scale, shift, rows, c);
}

void minidl_batchnorm_backward(float *dx, float *dgamma, float *dbeta, const float *dout, const float *x,
                               const float *mean, const float *invstd, const float *gamma, int64_t rows,
                               int64_t c, float *scratch)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    float *sum_dout = scratch + 2 * MINIDL_COLUMN_CHUNKS * c; /* the six per-channel vectors, each (c) */
    float *sum_dout_dev = sum_dout + c;
    float *k_dout = sum_dout_dev + c, *k_x = k_dout + c, *shift = k_x + c;
    minidl_column_reduce(sum_dout, sum_dout_dev, COLUMN_SUM_AND_DOT_DEV, dout, x, mean, rows, c, 1.0,
                         scratch);
    /* dx = k / M * (M dout - sum_dout - xhat * sum_dout_xhat), k = gamma * invstd,
     *    = dout * k + x * k_x + shift with k_x = -k invstd sum_dout_xhat / M. */
    double inv_rows = rows > 0 ? 1.0 / (double)rows : 0.0;
    for (int64_t j = 0; j < c; j++) {
        double sum_dout_xhat = (double)sum_dout_dev[j] * invstd[j];
        double k = gamma ? (double)gamma[j] * invstd[j] : (double)invstd[j];
        double kx = -k * invstd[j] * sum_dout_xhat * inv_rows;
        k_dout[j] = (float)k;
        k_x[j] = (float)kx;
        shift[j] = (float)(-k * sum_dout[j] * inv_rows - mean[j] * kx);
        if (dgamma) dgamma[j] = (float)sum_dout_xhat;
        if (dbeta) dbeta[j] = sum_dout[j];
    }
    int64_t step = minidl_rows_per_block(c);
#pragma omp parallel for schedule(static) if (rows * c >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t r0 = 0; r0 < rows; r0 += step) {
        int64_t nr = rows - r0 < step ? rows - r0 : step;
        vk->rows_affine2(dx + r0 * c, dout + r0 * c, k_dout, x + r0 * c, k_x, shift, nr, c);
    }
}
