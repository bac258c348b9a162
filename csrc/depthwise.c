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

/* One op's arguments, as the row jobs below see them. */
struct depthwise_job {
    const struct depthwise_rows *k;
    const struct minidl_window *win;
    float *out;                       /* out (forward), dx (backward-data), dweight (backward-filter) */
    float *dbias;                     /* backward-filter's dbias, or NULL */
    float *partial;                   /* backward-filter: this thread's (KH * KW * F) + (F) sums */
    const float *in, *weight, *bias;  /* in: x (forward, backward-filter) or dout (backward-data) */
    const float *dout;                /* backward-filter's */
};

typedef void (*row_job)(const struct depthwise_job *j, struct row_scratch *s, int64_t r);

/* Run job(r) for r in [0, rows) on the op's threads (a static schedule), each thread with its
 * row scratch and `extra` zeroed floats of partial sums (j->partial); at the end the threads'
 * partials are added in thread order, element i into j->out[i] for i < KH * KW * F and into
 * j->dbias[i - KH * KW * F] after that. */
static int run_rows(row_job job, struct depthwise_job *j, int64_t rows, int64_t extra)
{
    const int threads = threads_for(j->win);
    const size_t scratch = (size_t)threads * scratch_bytes(j->win);
    char *mem = minidl_alloc(scratch + (size_t)threads * extra * sizeof(float));
    if (!mem)
        return MINIDL_OUT_OF_MEMORY;
    float *partials = (float *)(mem + scratch); /* partials is (threads, extra) */
    memset(partials, 0, (size_t)threads * extra * sizeof(float));
#pragma omp parallel num_threads(threads)
    {
        struct row_scratch s = thread_scratch(mem, j->win);
        struct depthwise_job mine = *j;
        mine.partial = partials + thread_index() * extra;
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; r++)
            job(&mine, &s, r);
    }
    const int64_t taps_f = j->win->kh * j->win->kw * j->win->f;
    for (int64_t i = 0; i < extra; i++) {
        float sum = 0.0f;
        for (int t = 0; t < threads; t++)
            sum += partials[t * extra + i];
        *(i < taps_f ? j->out + i : j->dbias + i - taps_f) = sum;
    }
    free(mem);
    return MINIDL_OK;
}

/* output row r = (b, oy) */
static void forward_job(const struct depthwise_job *j, struct row_scratch *s, int64_t r)
{
    const struct minidl_window *win = j->win;
    int64_t b = r / win->oh, oy = r % win->oh;
    input_rows(s, j->in + b * win->h * win->w * win->c, oy, win);
    j->k->forward(j->out + r * win->ow * win->f, s->rows, j->weight, j->bias, win);
}

int minidl_depthwise_conv2d_forward(float *out, const float *x, const float *weight, const float *bias,
                                    const struct minidl_window *win)
{
    struct depthwise_job j = {.k = active_rows(), .win = win, .out = out, .in = x, .weight = weight, .bias = bias};
    return run_rows(forward_job, &j, win->n * win->oh, 0);
}

/* input row r = (b, iy) */
static void backward_data_job(const struct depthwise_job *j, struct row_scratch *s, int64_t r)
{
    const struct minidl_window *win = j->win;
    const int64_t m = win->f / win->c, b = r / win->h, iy = r % win->h;
    for (int64_t ky = 0; ky < win->kh; ky++) {
        /* output row oy reads this row through tap ky when oy * sh - pad_top + ky = iy */
        int64_t t = iy + win->pad_top - ky;
        int valid = t >= 0 && t % win->sh == 0 && t / win->sh < win->oh;
        s->rows[ky] = valid ? j->in + (b * win->oh + t / win->sh) * win->ow * win->f : NULL;
    }
    float *dxr = j->out + r * win->w * win->c; /* dxr is (W, C) */
    if (m == 1) {
        j->k->backward_data(dxr, s->rows, j->weight, win);
        return;
    }
    float *wide = s->expanded + win->kh * win->w * win->f; /* wide is (W, F): reduce over m */
    j->k->backward_data(wide, s->rows, j->weight, win);
    for (int64_t p = 0; p < win->w * win->c; p++) {
        float sum = 0.0f;
        for (int64_t i = 0; i < m; i++)
            sum += wide[p * m + i];
        dxr[p] = sum;
    }
}

int minidl_depthwise_conv2d_backward_data(float *dx, const float *dout, const float *weight,
                                          const struct minidl_window *win)
{
    struct depthwise_job j = {.k = active_rows(), .win = win, .out = dx, .in = dout, .weight = weight};
    return run_rows(backward_data_job, &j, win->n * win->h, 0);
}

/* output row r = (b, oy), summed into this thread's partial (dweight, then dbias) */
static void backward_filter_job(const struct depthwise_job *j, struct row_scratch *s, int64_t r)
{
    const struct minidl_window *win = j->win;
    const int64_t taps_f = win->kh * win->kw * win->f, b = r / win->oh, oy = r % win->oh;
    input_rows(s, j->in + b * win->h * win->w * win->c, oy, win);
    j->k->backward_filter(j->partial, j->dbias ? j->partial + taps_f : NULL, s->rows,
                          j->dout + r * win->ow * win->f, win);
}

int minidl_depthwise_conv2d_backward_filter(float *dweight, float *dbias, const float *dout, const float *x,
                                            const struct minidl_window *win)
{
    struct depthwise_job j = {.k = active_rows(), .win = win, .out = dweight, .dbias = dbias, .in = x,
                              .dout = dout};
    return run_rows(backward_filter_job, &j, win->n * win->oh, win->kh * win->kw * win->f + (dbias ? win->f : 0));
}
