/* Elementwise ops, bias and activations: threading here, vector kernels in vector_kernels_*.c. */
#include <string.h>

#include "elementwise.h"
#include "internal/column_reduce.h"
#include "internal/parallel.h"
#include "internal/vector_kernels.h"

int64_t minidl_column_scratch_floats(int64_t c)
{
    /* chunk partials, then up to 6 per-channel vectors of the batchnorm ops */
    return (2 * MINIDL_COLUMN_CHUNKS + 6) * c;
}

/* The elementwise ops a (op) b on n floats: below MINIDL_PARALLEL_MIN one call, otherwise
 * MINIDL_BLOCK-sized blocks shared among the threads. */
typedef void (*binary_kernel)(float *out, const float *a, const float *b, int64_t n);

static void run_binary(binary_kernel kernel, float *out, const float *a, const float *b, int64_t n)
{
    if (n < MINIDL_PARALLEL_MIN) {
        kernel(out, a, b, n);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(minidl_num_threads())
    for (int64_t k = 0; k < minidl_blocks(n); k++) {
        int64_t lo = k * MINIDL_BLOCK;
        kernel(out + lo, a + lo, b + lo, minidl_block_len(n, k));
    }
}

void minidl_add(float *out, const float *a, const float *b, int64_t n)
{
    run_binary(minidl_active_kernels()->add, out, a, b, n);
}

void minidl_axpby(float *out, float alpha, const float *x, float beta, const float *y, int64_t n)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    if (n < MINIDL_PARALLEL_MIN) {
        vk->axpby(out, alpha, x, beta, y, n);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(minidl_num_threads())
    for (int64_t k = 0; k < minidl_blocks(n); k++) {
        int64_t lo = k * MINIDL_BLOCK;
        vk->axpby(out + lo, alpha, x + lo, beta, y + lo, minidl_block_len(n, k));
    }
}

void minidl_multiply(float *out, const float *a, const float *b, int64_t n)
{
    run_binary(minidl_active_kernels()->multiply, out, a, b, n);
}

void minidl_bias_add(float *out, const float *x, const float *bias, int64_t rows, int64_t c)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    if (rows * c < MINIDL_PARALLEL_MIN) {
        vk->bias_add(out, x, bias, rows, c);
        return;
    }
    int64_t step = minidl_rows_per_block(c);
#pragma omp parallel for schedule(static) num_threads(minidl_num_threads())
    for (int64_t r0 = 0; r0 < rows; r0 += step) {
        int64_t nr = rows - r0 < step ? rows - r0 : step;
        vk->bias_add(out + r0 * c, x + r0 * c, bias, nr, c);
    }
}

void minidl_bias_grad(float *dbias, const float *dout, int64_t rows, int64_t c, float *scratch)
{
    minidl_column_reduce(dbias, NULL, COLUMN_SUM, dout, NULL, NULL, rows, c, 1.0, scratch);
}

/* Forward (dout NULL: out = f(x)) or backward (out = dx from dout, y = f(x) passed as x, and
 * the forward input xin for the kinds that read it, else NULL) of one activation: softmax by
 * blocks of whole rows, the others by blocks of elements. */
static void activation(float *out, const float *dout, const float *x, const float *xin, int kind, float alpha,
                       int64_t rows, int64_t c)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    int64_t n = rows * c;
    if (kind == MINIDL_ACT_SOFTMAX) {
        int64_t step = n < MINIDL_PARALLEL_MIN ? rows : minidl_rows_per_block(c);
#pragma omp parallel for schedule(static) if (n >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
        for (int64_t r0 = 0; r0 < rows; r0 += step) {
            int64_t nr = rows - r0 < step ? rows - r0 : step, at = r0 * c;
            if (dout)
                vk->softmax_backward_rows(out + at, dout + at, x + at, nr, c);
            else
                vk->softmax_rows(out + at, NULL, x + at, nr, c);
        }
        return;
    }
    int64_t step = n < MINIDL_PARALLEL_MIN ? n : MINIDL_BLOCK;
#pragma omp parallel for schedule(static) if (n >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t lo = 0; lo < n; lo += step) {
        int64_t len = n - lo < step ? n - lo : step;
        if (dout)
            vk->activation_backward(out + lo, dout + lo, x + lo, xin ? xin + lo : NULL, kind, alpha, len);
        else
            vk->activation_forward(out + lo, x + lo, kind, alpha, len);
    }
}

void minidl_activation_forward(float *out, const float *x, int kind, float alpha, int64_t rows, int64_t c)
{
    activation(out, NULL, x, NULL, kind, alpha, rows, c);
}

void minidl_activation_backward(float *dx, const float *dout, const float *y, const float *x, int kind,
                                float alpha, int64_t rows, int64_t c)
{
    activation(dx, dout, y, x, kind, alpha, rows, c);
}

void minidl_copy_columns(float *dst, const float *src, int64_t dst_cols, int64_t dst_offset,
                         int64_t src_cols, int64_t src_offset, int64_t width, int64_t rows)
{
#pragma omp parallel for schedule(static) if (rows * width >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < rows; r++)
        memcpy(dst + r * dst_cols + dst_offset, src + r * src_cols + src_offset, (size_t)width * sizeof(float));
}
