/* 2-D convolution (channels-last) on top of sgemm.
 *
 * The output pixels (n, oy, ox) are the rows of a GEMM:
 *   forward          out (rows, F)    = cols (rows, K) @ weight (K, F),  K = KH * KW * C
 *   backward-data    dcols (rows, K)  = dout (rows, F) @ weight^T, then col2im adds dcols into dx
 *   backward-filter  dweight (K, F)  += cols^T (K, rows) @ dout (rows, F)
 * where cols is the im2col matrix. The rows are processed in chunks small enough that
 * a chunk of cols stays in L2 between im2col and the GEMM. A 1x1, stride-1, unpadded
 * conv needs no im2col: x itself is cols.
 *
 * Threads split the batch by whole images when there are at least as many images as
 * threads (so col2im never races), each running a single-threaded GEMM on its chunks;
 * backward-filter sums per-thread partial gradients at the end. */

#include "conv.h"

#include <string.h>

#include "cpu_features.h"
#include "internal/gemm_kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Bytes of cols per chunk: about a quarter of the 1 MiB L2, leaving room for the packed A block. */
#define CONV_CHUNK_BYTES (256 * 1024)
/* Chunks hold a multiple of this many rows (a multiple of every micro-kernel's MR). */
#define CONV_ROW_QUANTUM 48

static long total_rows(const conv2d_shape *s) { return (long)s->n * s->oh * s->ow; }
static int patch_size(const conv2d_shape *s) { return s->kh * s->kw * s->c; }

static int is_pointwise(const conv2d_shape *s)
{
    return s->kh == 1 && s->kw == 1 && s->sh == 1 && s->sw == 1 && s->pad_top == 0 &&
           s->pad_left == 0 && s->oh == s->h && s->ow == s->w;
}

static long chunk_rows(const conv2d_shape *s)
{
    long rows = CONV_CHUNK_BYTES / ((long)sizeof(float) * patch_size(s));
    rows = rows / CONV_ROW_QUANTUM * CONV_ROW_QUANTUM;
    if (rows < CONV_ROW_QUANTUM)
        rows = CONV_ROW_QUANTUM;
    long all = (total_rows(s) + CONV_ROW_QUANTUM - 1) / CONV_ROW_QUANTUM * CONV_ROW_QUANTUM;
    return rows < all ? rows : all;
}

/* Scratch layout: the weights packed for the GEMM once per call (shared by all threads),
 * then per thread a cols chunk (chunk_rows, K), a partial dweight (K, F) and dbias (F,). */
static size_t scratch_shared(const conv2d_shape *s)
{
    size_t forward = sgemm_packed_b_floats(patch_size(s), s->f);       // weight (K, F)
    size_t backward = sgemm_packed_b_floats(s->f, patch_size(s));      // weight^T (F, K)
    return ((forward > backward ? forward : backward) + 15) / 16 * 16; // keeps 64-byte alignment
}

static size_t scratch_per_thread(const conv2d_shape *s)
{
    size_t k = patch_size(s);
    return ((size_t)chunk_rows(s) * k + k * s->f + s->f + 15) / 16 * 16;
}

static float *thread_scratch(const conv2d_shape *s, float *scratch, int t)
{
    return scratch + scratch_shared(s) + scratch_per_thread(s) * t;
}

size_t conv2d_scratch_floats(const conv2d_shape *s)
{
    return scratch_shared(s) + scratch_per_thread(s) * minidl_num_threads();
}

static int usable_threads(const conv2d_shape *s, size_t scratch_floats)
{
    if (scratch_floats < scratch_shared(s))
        return 0;
    long fit = (long)((scratch_floats - scratch_shared(s)) / scratch_per_thread(s));
    long threads = minidl_num_threads();
    if (threads > fit)
        threads = fit;
    if (threads > total_rows(s))
        threads = total_rows(s) > 0 ? total_rows(s) : 1;
    return (int)threads;
}

/* The rows [*r0, *r1) thread t of nt handles: whole images when there are enough. */
static void thread_rows(const conv2d_shape *s, int t, int nt, long *r0, long *r1)
{
    long per_image = (long)s->oh * s->ow;
    if (s->n >= nt) {
        *r0 = (long)s->n * t / nt * per_image;
        *r1 = (long)s->n * (t + 1) / nt * per_image;
    } else {
        *r0 = total_rows(s) * t / nt;
        *r1 = total_rows(s) * (t + 1) / nt;
    }
}

static void thread_index(int *t, int *nt)
{
#ifdef _OPENMP
    *t = omp_get_thread_num();
    *nt = omp_get_num_threads();
#else
    *t = 0;
    *nt = 1;
#endif
}

/* cols (rows, K) = the input patches of output rows [r0, r0 + rows), zero where padded. */
static void im2col(float *cols, const float *x, const conv2d_shape *s, long r0, long rows)
{
    const int c = s->c, kw = s->kw, k = patch_size(s);
    const long per_image = (long)s->oh * s->ow;
    for (long r = 0; r < rows; r++) {
        long g = r0 + r;
        int n = (int)(g / per_image), oy = (int)(g % per_image / s->ow), ox = (int)(g % s->ow);
        int iy0 = oy * s->sh - s->pad_top, ix0 = ox * s->sw - s->pad_left;
        float *dst = cols + r * k; // dst is (KH, KW, C)
        for (int ky = 0; ky < s->kh; ky++, dst += kw * c) {
            int iy = iy0 + ky;
            if (iy < 0 || iy >= s->h) {
                memset(dst, 0, sizeof(float) * kw * c);
                continue;
            }
            const float *src = x + ((size_t)(n * s->h + iy) * s->w) * c; // src is (W, C)
            if (ix0 >= 0 && ix0 + kw <= s->w) { // the KW pixels are adjacent in x
                memcpy(dst, src + (size_t)ix0 * c, sizeof(float) * kw * c);
                continue;
            }
            for (int kx = 0; kx < kw; kx++) {
                int ix = ix0 + kx;
                if (ix < 0 || ix >= s->w)
                    memset(dst + kx * c, 0, sizeof(float) * c);
                else
                    memcpy(dst + kx * c, src + (size_t)ix * c, sizeof(float) * c);
            }
        }
    }
}

static void add_floats(float *dst, const float *src, int count)
{
    for (int i = 0; i < count; i++)
        dst[i] += src[i];
}

/* dx += the patches in dcols (rows, K) of output rows [r0, r0 + rows) (the adjoint of im2col). */
static void col2im(float *dx, const float *dcols, const conv2d_shape *s, long r0, long rows)
{
    const int c = s->c, kw = s->kw, k = patch_size(s);
    const long per_image = (long)s->oh * s->ow;
    for (long r = 0; r < rows; r++) {
        long g = r0 + r;
        int n = (int)(g / per_image), oy = (int)(g % per_image / s->ow), ox = (int)(g % s->ow);
        int iy0 = oy * s->sh - s->pad_top, ix0 = ox * s->sw - s->pad_left;
        const float *src = dcols + r * k; // src is (KH, KW, C)
        for (int ky = 0; ky < s->kh; ky++, src += kw * c) {
            int iy = iy0 + ky;
            if (iy < 0 || iy >= s->h)
                continue;
            float *dst = dx + ((size_t)(n * s->h + iy) * s->w) * c; // dst is (W, C)
            if (ix0 >= 0 && ix0 + kw <= s->w) {
                add_floats(dst + (size_t)ix0 * c, src, kw * c);
                continue;
            }
            for (int kx = 0; kx < kw; kx++) {
                int ix = ix0 + kx;
                if (ix >= 0 && ix < s->w)
                    add_floats(dst + (size_t)ix * c, src + kx * c, c);
            }
        }
    }
}

/* out rows (rows, F) += bias, then max(0, .) when relu: done while the rows are still in cache. */
static void bias_relu(float *out, const float *bias, long rows, int f, int relu)
{
    for (long r = 0; r < rows; r++) {
        float *o = out + r * f;
        if (bias)
            for (int j = 0; j < f; j++)
                o[j] += bias[j];
        if (relu)
            for (int j = 0; j < f; j++)
                o[j] = o[j] > 0.0f ? o[j] : 0.0f;
    }
}

int conv2d_forward(float *out, const float *x, const float *weight, const float *bias,
                   const conv2d_shape *s, float *scratch, size_t scratch_floats, int relu)
{
    // out is (N, OH, OW, F), x is (N, H, W, C), weight is (K = KH*KW*C, F), bias is (F,)
    int threads = usable_threads(s, scratch_floats);
    if (threads < 1)
        return -1;
    const int k = patch_size(s), f = s->f, pointwise = is_pointwise(s);
    const long chunk = chunk_rows(s);
    float *packed_weight = scratch; // weight (K, F) as the GEMM's B
    sgemm_pack_b(packed_weight, weight, f, 1, k, f);
#pragma omp parallel num_threads(threads)
    {
        int t, nt;
        thread_index(&t, &nt);
        float *cols = thread_scratch(s, scratch, t); // cols is (chunk, K)
        long r0, r1;
        thread_rows(s, t, nt, &r0, &r1);
        for (long r = r0; r < r1; r += chunk) {
            long rows = r1 - r < chunk ? r1 - r : chunk;
            const float *a = pointwise ? x + r * k : cols;
            if (!pointwise)
                im2col(cols, x, s, r, rows);
            sgemm_prepacked_b_serial(out + r * f, f, a, k, 1, packed_weight, (int)rows, f, k, 0.0f);
            if (bias || relu)
                bias_relu(out + r * f, bias, rows, f, relu);
        }
    }
    return 0;
}

int conv2d_backward_data(float *dx, const float *dout, const float *weight,
                         const conv2d_shape *s, float *scratch, size_t scratch_floats)
{
    // dx is (N, H, W, C), dout is (N, OH, OW, F), weight is (K = KH*KW*C, F)
    int threads = usable_threads(s, scratch_floats);
    if (threads < 1)
        return -1;
    const int k = patch_size(s), f = s->f, c = s->c, pointwise = is_pointwise(s);
    const long chunk = chunk_rows(s), image = (long)s->h * s->w * c;
    if (pointwise) { // dx (rows, C) = dout (rows, F) @ weight^T: one GEMM, no overlap
        sgemm_strided(dx, c, dout, f, 1, weight, 1, f, (int)total_rows(s), c, f, 1.0f, 0.0f);
        return 0;
    }
    if (s->n < threads) { // too few images to split: one chunk loop, threaded GEMMs
        float *dcols = thread_scratch(s, scratch, 0); // dcols is (chunk, K)
        memset(dx, 0, sizeof(float) * image * s->n);
        for (long r = 0; r < total_rows(s); r += chunk) {
            long rows = total_rows(s) - r < chunk ? total_rows(s) - r : chunk;
            sgemm_strided(dcols, k, dout + r * f, f, 1, weight, 1, f, (int)rows, k, f, 1.0f, 0.0f);
            col2im(dx, dcols, s, r, rows);
        }
        return 0;
    }
    float *packed_weight_t = scratch; // weight^T (F, K) as the GEMM's B
    sgemm_pack_b(packed_weight_t, weight, 1, f, f, k);
#pragma omp parallel num_threads(threads)
    {
        int t, nt;
        thread_index(&t, &nt);
        float *dcols = thread_scratch(s, scratch, t); // dcols is (chunk, K)
        long r0, r1;
        thread_rows(s, t, nt, &r0, &r1);
        long n0 = (long)s->n * t / nt, n1 = (long)s->n * (t + 1) / nt; // the images this thread owns
        memset(dx + n0 * image, 0, sizeof(float) * image * (n1 - n0));
        for (long r = r0; r < r1; r += chunk) {
            long rows = r1 - r < chunk ? r1 - r : chunk;
            sgemm_prepacked_b_serial(dcols, k, dout + r * f, f, 1, packed_weight_t, (int)rows, k, f, 0.0f);
            col2im(dx, dcols, s, r, rows);
        }
    }
    return 0;
}

int conv2d_backward_filter(float *dweight, float *dbias, const float *dout, const float *x,
                           const conv2d_shape *s, float *scratch, size_t scratch_floats)
{
    // dweight is (K = KH*KW*C, F), dbias is (F,), dout is (N, OH, OW, F), x is (N, H, W, C)
    int threads = usable_threads(s, scratch_floats);
    if (threads < 1)
        return -1;
    const int k = patch_size(s), f = s->f, pointwise = is_pointwise(s);
    const long chunk = chunk_rows(s);
    int used[threads]; // whether thread t wrote its partial sums
#pragma omp parallel num_threads(threads)
    {
        int t, nt;
        thread_index(&t, &nt);
        float *cols = thread_scratch(s, scratch, t);                // cols is (chunk, K)
        float *dw = t == 0 ? dweight : cols + (size_t)chunk * k;    // dw is (K, F)
        float *db = t == 0 ? dbias : cols + (size_t)chunk * k + (size_t)k * f; // db is (F,)
        long r0, r1;
        thread_rows(s, t, nt, &r0, &r1);
        used[t] = r1 > r0;
        if (t == 0 && r1 <= r0) {
            memset(dweight, 0, sizeof(float) * k * f);
            if (dbias)
                memset(dbias, 0, sizeof(float) * f);
        }
        for (long r = r0; r < r1; r += chunk) {
            long rows = r1 - r < chunk ? r1 - r : chunk;
            const float *a = pointwise ? x + r * k : cols;
            if (!pointwise)
                im2col(cols, x, s, r, rows);
            // dw (K, F) (+)= a^T (K, rows) @ dout rows (rows, F)
            sgemm_strided_serial(dw, f, a, 1, k, dout + r * f, f, 1, k, f, (int)rows, 1.0f,
                                 r == r0 ? 0.0f : 1.0f);
            if (dbias) {
                if (r == r0)
                    memset(db, 0, sizeof(float) * f);
                for (long i = 0; i < rows; i++)
                    add_floats(db, dout + (r + i) * f, f);
            }
        }
    }
    for (int t = 1; t < threads; t++) {
        if (!used[t])
            continue;
        const float *part = thread_scratch(s, scratch, t) + (size_t)chunk * k;
        add_floats(dweight, part, k * f);
        if (dbias)
            add_floats(dbias, part + (size_t)k * f, f);
    }
    return 0;
}

void conv2d_forward_ref(float *out, const float *x, const float *weight, const float *bias,
                        const conv2d_shape *s, int relu)
{
    for (int n = 0; n < s->n; n++)
        for (int oy = 0; oy < s->oh; oy++)
            for (int ox = 0; ox < s->ow; ox++)
                for (int f = 0; f < s->f; f++) {
                    double acc = bias ? bias[f] : 0.0;
                    for (int ky = 0; ky < s->kh; ky++)
                        for (int kx = 0; kx < s->kw; kx++) {
                            int iy = oy * s->sh - s->pad_top + ky, ix = ox * s->sw - s->pad_left + kx;
                            if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                                continue;
                            for (int c = 0; c < s->c; c++)
                                acc += (double)x[((size_t)(n * s->h + iy) * s->w + ix) * s->c + c] *
                                       weight[((size_t)(ky * s->kw + kx) * s->c + c) * s->f + f];
                        }
                    float v = (float)acc;
                    out[((size_t)(n * s->oh + oy) * s->ow + ox) * s->f + f] = relu && v < 0.0f ? 0.0f : v;
                }
}

void conv2d_backward_data_ref(float *dx, const float *dout, const float *weight, const conv2d_shape *s)
{
    memset(dx, 0, sizeof(float) * s->n * s->h * s->w * s->c);
    for (int n = 0; n < s->n; n++)
        for (int oy = 0; oy < s->oh; oy++)
            for (int ox = 0; ox < s->ow; ox++)
                for (int ky = 0; ky < s->kh; ky++)
                    for (int kx = 0; kx < s->kw; kx++) {
                        int iy = oy * s->sh - s->pad_top + ky, ix = ox * s->sw - s->pad_left + kx;
                        if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                            continue;
                        for (int c = 0; c < s->c; c++) {
                            double acc = 0.0;
                            for (int f = 0; f < s->f; f++)
                                acc += (double)dout[((size_t)(n * s->oh + oy) * s->ow + ox) * s->f + f] *
                                       weight[((size_t)(ky * s->kw + kx) * s->c + c) * s->f + f];
                            dx[((size_t)(n * s->h + iy) * s->w + ix) * s->c + c] += (float)acc;
                        }
                    }
}

void conv2d_backward_filter_ref(float *dweight, float *dbias, const float *dout, const float *x,
                                const conv2d_shape *s)
{
    for (int ky = 0; ky < s->kh; ky++)
        for (int kx = 0; kx < s->kw; kx++)
            for (int c = 0; c < s->c; c++)
                for (int f = 0; f < s->f; f++) {
                    double acc = 0.0;
                    for (int n = 0; n < s->n; n++)
                        for (int oy = 0; oy < s->oh; oy++)
                            for (int ox = 0; ox < s->ow; ox++) {
                                int iy = oy * s->sh - s->pad_top + ky, ix = ox * s->sw - s->pad_left + kx;
                                if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                                    continue;
                                acc += (double)x[((size_t)(n * s->h + iy) * s->w + ix) * s->c + c] *
                                       dout[((size_t)(n * s->oh + oy) * s->ow + ox) * s->f + f];
                            }
                    dweight[((size_t)(ky * s->kw + kx) * s->c + c) * s->f + f] = (float)acc;
                }
    if (dbias)
        for (int f = 0; f < s->f; f++) {
            double acc = 0.0;
            for (long r = 0; r < (long)s->n * s->oh * s->ow; r++)
                acc += dout[r * s->f + f];
            dbias[f] = (float)acc;
        }
}
