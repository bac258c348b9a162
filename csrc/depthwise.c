/* The depthwise convolution's drivers (depthwise.h): each op is cut into rows that OpenMP
 * threads share (static schedule: contiguous runs of rows), the rows each tap reads are found
 * here, and the active ISA's row kernels (internal/depthwise_rows.h) do the arithmetic.
 * Forward and backward-data write every element of their output once (backward-data gathers
 * over the windows covering each input row, so threads never write one address); backward-
 * filter sums into one partial (KH, KW, F) + (F) per thread, added in thread order at the end. */
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "depthwise.h"
#include "internal/checked_alloc.h"
#include "internal/depthwise_rows.h"
#include "internal/parallel.h"
#include "status.h"

static const struct depthwise_rows *active_rows(void)
{
    switch (minidl_cpu_isa()) {
    case MINIDL_ISA_AVX512:
        return minidl_depthwise_rows_avx512();
    case MINIDL_ISA_AVX2:
        return minidl_depthwise_rows_avx2();
    default:
        return minidl_depthwise_rows_generic();
    }
}

static int thread_index(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static int threads_for(const struct minidl_window *win)
{
    int64_t work = win->n * win->oh * win->ow * win->f * win->kh * win->kw;
    return work >= MINIDL_PARALLEL_MIN ? minidl_num_threads() : 1;
}

/* One thread's scratch: KH row pointers, then (depth multiplier > 1 only) KH + 1 rows of
 * (W, F) floats: the input rows expanded to F channels and backward-data's F-channel row. */
struct row_scratch {
    const float **rows;
    float *expanded;
};

static size_t round64(size_t bytes) { return (bytes + 63) / 64 * 64; }

static size_t scratch_bytes(const struct minidl_window *win)
{
    size_t bytes = round64((size_t)win->kh * sizeof(float *));
    if (win->f != win->c)
        bytes += round64((size_t)(win->kh + 1) * win->w * win->f * sizeof(float));
    return bytes;
}

static struct row_scratch thread_scratch(char *mem, const struct minidl_window *win)
{
    char *base = mem + (size_t)thread_index() * scratch_bytes(win);
    struct row_scratch s = {(const float **)base, (float *)(base + round64((size_t)win->kh * sizeof(float *)))};
    return s;
}

/* xrows of output row oy of one image xb (H, W, C): row pointers of F channels, or NULL on padding. */
static void input_rows(struct row_scratch *s, const float *xb, int64_t oy, const struct minidl_window *win)
{
    const int64_t m = win->f / win->c;
    for (int64_t ky = 0; ky < win->kh; ky++) {
        int64_t iy = oy * win->sh - win->pad_top + ky;
        if (iy < 0 || iy >= win->h) {
            s->rows[ky] = NULL;
            continue;
        }
        const float *src = xb + iy * win->w * win->c; /* src is (W, C) */
        if (m == 1) {
            s->rows[ky] = src;
            continue;
        }
        float *dst = s->expanded + ky * win->w * win->f; /* dst is (W, F) */
        for (int64_t p = 0; p < win->w * win->c; p++)
            for (int64_t j = 0; j < m; j++)
                dst[p * m + j] = src[p];
        s->rows[ky] = dst;
    }
}

int minidl_depthwise_conv2d_forward(float *out, const float *x, const float *weight, const float *bias,
                                    const struct minidl_window *win)
{
    const struct depthwise_rows *k = active_rows();
    const int threads = threads_for(win);
    char *mem = minidl_alloc((size_t)threads * scratch_bytes(win));
    if (!mem)
        return MINIDL_OUT_OF_MEMORY;
#pragma omp parallel num_threads(threads)
    {
        struct row_scratch s = thread_scratch(mem, win);
#pragma omp for schedule(static)
        for (int64_t r = 0; r < win->n * win->oh; r++) {
            int64_t b = r / win->oh, oy = r % win->oh;
            input_rows(&s, x + b * win->h * win->w * win->c, oy, win);
            k->forward(out + r * win->ow * win->f, s.rows, weight, bias, win);
        }
    }
    free(mem);
    return MINIDL_OK;
}

int minidl_depthwise_conv2d_backward_data(float *dx, const float *dout, const float *weight,
                                          const struct minidl_window *win)
{
    const struct depthwise_rows *k = active_rows();
    const int threads = threads_for(win);
    const int64_t m = win->f / win->c;
    char *mem = minidl_alloc((size_t)threads * scratch_bytes(win));
    if (!mem)
        return MINIDL_OUT_OF_MEMORY;
#pragma omp parallel num_threads(threads)
    {
        struct row_scratch s = thread_scratch(mem, win);
#pragma omp for schedule(static)
        for (int64_t r = 0; r < win->n * win->h; r++) {
            int64_t b = r / win->h, iy = r % win->h;
            for (int64_t ky = 0; ky < win->kh; ky++) {
                /* output row oy reads this row through tap ky when oy * sh - pad_top + ky = iy */
                int64_t t = iy + win->pad_top - ky;
                int valid = t >= 0 && t % win->sh == 0 && t / win->sh < win->oh;
                s.rows[ky] = valid ? dout + (b * win->oh + t / win->sh) * win->ow * win->f : NULL;
            }
            float *dxr = dx + r * win->w * win->c; /* dxr is (W, C) */
            if (m == 1) {
                k->backward_data(dxr, s.rows, weight, win);
                continue;
            }
            float *wide = s.expanded + win->kh * win->w * win->f; /* wide is (W, F): reduce over m */
            k->backward_data(wide, s.rows, weight, win);
            for (int64_t p = 0; p < win->w * win->c; p++) {
                float sum = 0.0f;
                for (int64_t j = 0; j < m; j++)
                    sum += wide[p * m + j];
                dxr[p] = sum;
            }
        }
    }
    free(mem);
    return MINIDL_OK;
}

int minidl_depthwise_conv2d_backward_filter(float *dweight, float *dbias, const float *dout, const float *x,
                                            const struct minidl_window *win)
{
    const struct depthwise_rows *k = active_rows();
    const int threads = threads_for(win);
    const int64_t taps_f = win->kh * win->kw * win->f, part = taps_f + win->f; /* one thread's partial */
    const size_t row_bytes = (size_t)threads * scratch_bytes(win);
    char *mem = minidl_alloc(row_bytes + (size_t)threads * part * sizeof(float));
    if (!mem)
        return MINIDL_OUT_OF_MEMORY;
    float *partials = (float *)(mem + row_bytes); /* partials is (threads, KH * KW * F + F) */
    memset(partials, 0, (size_t)threads * part * sizeof(float));
#pragma omp parallel num_threads(threads)
    {
        struct row_scratch s = thread_scratch(mem, win);
        float *mine = partials + thread_index() * part;
#pragma omp for schedule(static)
        for (int64_t r = 0; r < win->n * win->oh; r++) {
            int64_t b = r / win->oh, oy = r % win->oh;
            input_rows(&s, x + b * win->h * win->w * win->c, oy, win);
            k->backward_filter(mine, dbias ? mine + taps_f : NULL, s.rows, dout + r * win->ow * win->f, win);
        }
    }
    memcpy(dweight, partials, (size_t)taps_f * sizeof(float));
    if (dbias)
        memcpy(dbias, partials + taps_f, (size_t)win->f * sizeof(float));
    for (int t = 1; t < threads; t++) {
        const float *p = partials + t * part;
        for (int64_t i = 0; i < taps_f; i++)
            dweight[i] += p[i];
        if (dbias)
            for (int64_t i = 0; i < win->f; i++)
                dbias[i] += p[taps_f + i];
    }
    free(mem);
    return MINIDL_OK;
}
