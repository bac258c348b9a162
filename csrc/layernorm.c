/* Layer normalization: every row is independent, so rows are split across threads and each
 * row is a few `omp simd` loops (vectorized at the build's baseline ISA; reductions in float
 * within a row, the statistics in double). dgamma / dbeta are column sums over rows and go
 * through column_reduce.c, whose chunking keeps them independent of the thread count. */
#include <math.h>

#include "layernorm.h"
#include "internal/column_reduce.h"
#include "internal/parallel.h"

/* centered 0 is Keras's rms_scaling: out = x * invstd * gamma + beta, the same statistics */
static void forward_row(float *out, float *mean, float *invstd, const float *x, const float *gamma,
                        const float *beta, float epsilon, int centered, int64_t c)
{
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < c; j++) s += x[j];
    float m = (float)((double)s / (double)c);
    float q = 0.0f;
#pragma omp simd reduction(+ : q)
    for (int64_t j = 0; j < c; j++) q += (x[j] - m) * (x[j] - m);
    float is = (float)(1.0 / sqrt((double)q / (double)c + epsilon));
    *mean = m;
    *invstd = is;
    const float shift = centered ? m : 0.0f;
#pragma omp simd
    for (int64_t j = 0; j < c; j++) out[j] = (x[j] - shift) * is * gamma[j] + beta[j];
}

/* dx = invstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dout * gamma; uncentered
 * (rms_scaling), dx = invstd * (g - xhat * mean(g * x * invstd)) */
static void backward_row(float *dx, const float *dout, const float *x, float m, float is, const float *gamma,
                         int centered, int64_t c)
{
    const float shift = centered ? m : 0.0f;
    float sg = 0.0f, sgx = 0.0f;
#pragma omp simd reduction(+ : sg, sgx)
    for (int64_t j = 0; j < c; j++) {
        float g = dout[j] * gamma[j];
        sg += g;
        sgx += g * (x[j] - shift) * is;
    }
    float a = centered ? (float)((double)sg / (double)c) : 0.0f, b = (float)((double)sgx / (double)c);
#pragma omp simd
    for (int64_t j = 0; j < c; j++) dx[j] = is * (dout[j] * gamma[j] - a - (x[j] - m) * is * b);
}

void minidl_layernorm_forward(float *out, float *mean, float *invstd, const float *x, const float *gamma,
                              const float *beta, float epsilon, int centered, int64_t rows, int64_t c)
{
#pragma omp parallel for schedule(static) if (rows * c >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < rows; r++)
        forward_row(out + r * c, mean + r, invstd + r, x + r * c, gamma, beta, epsilon, centered, c);
}

void minidl_layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dout, const float *x,
                               const float *mean, const float *invstd, const float *gamma, int centered,
                               int64_t rows, int64_t c, float *scratch)
{
    /* dgamma = column sums of dout * xhat (x * invstd uncentered), staged in dx (overwritten below) */
#pragma omp parallel for schedule(static) if (rows * c >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < rows; r++) {
        const float *dr = dout + r * c, *xr = x + r * c;
        float *pr = dx + r * c, m = centered ? mean[r] : 0.0f, is = invstd[r];
#pragma omp simd
        for (int64_t j = 0; j < c; j++) pr[j] = dr[j] * (xr[j] - m) * is;
    }
    minidl_column_reduce(dgamma, NULL, COLUMN_SUM, dx, NULL, NULL, rows, c, 1.0, scratch);
    minidl_column_reduce(dbeta, NULL, COLUMN_SUM, dout, NULL, NULL, rows, c, 1.0, scratch);
#pragma omp parallel for schedule(static) if (rows * c >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < rows; r++)
        backward_row(dx + r * c, dout + r * c, x + r * c, mean[r], invstd[r], gamma, centered, c);
}
