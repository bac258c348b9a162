/* PReLU: branch-free selects in `omp simd` loops, rows split across threads; dalpha is a
 * column sum (column_reduce.c, independent of the thread count) of a product staged in dx. */
#include "prelu.h"
#include "internal/column_reduce.h"
#include "internal/parallel.h"

void minidl_prelu_forward(float *out, const float *x, const float *alpha, int64_t rows, int64_t k)
{
#pragma omp parallel for schedule(static) if (rows * k >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * k;
        float *o = out + r * k;
#pragma omp simd
        for (int64_t j = 0; j < k; j++) o[j] = xr[j] > 0.0f ? xr[j] : alpha[j] * xr[j];
    }
}

void minidl_prelu_backward(float *dx, float *dalpha, const float *dout, const float *x, const float *alpha,
                           int64_t rows, int64_t k, float *scratch)
{
    int64_t n = rows * k;
#pragma omp parallel for schedule(static) if (n >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t i = 0; i < n; i++) {
        float d = dout[i];
        dx[i] = x[i] < 0.0f ? x[i] * d : 0.0f;
    }
    minidl_column_reduce(dalpha, NULL, COLUMN_SUM, dx, NULL, NULL, rows, k, 1.0, scratch);
#pragma omp parallel for schedule(static) if (n >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * k, *dr = dout + r * k;
        float *g = dx + r * k;
#pragma omp simd
        for (int64_t j = 0; j < k; j++) {
            float d = dr[j];
            g[j] = xr[j] > 0.0f ? d : (xr[j] < 0.0f ? alpha[j] * d : 0.0f);
        }
    }
}
