/* 2-D convolution (channels-last) on top of sgemm's micro-kernels.
 *
 * Stride-1 convolutions (the common case) use no im2col matrix: conv_implicit.c runs the
 * micro-kernels straight on each (padded) image, and backward-data is the forward conv
 * of the padded dout with the flipped, transposed kernel.
 *
 * Other convolutions make the output pixels (n, oy, ox) the rows of a GEMM:
 *   forward          out (rows, F)    = cols (rows, K) @ weight (K, F),  K = KH * KW * C
 *   backward-data    dcols (rows, K)  = dout (rows, F) @ weight^T, then col2im adds dcols into dx
 *   backward-filter  dweight (K, F)  += cols^T (K, rows) @ dout (rows, F)
 * where cols is the im2col matrix, built in chunks small enough to stay in L2 between
 * im2col and the GEMM. A 1x1, stride-1, unpadded conv needs neither: x itself is cols.
 *
 * Threads split the batch by whole images when there are at least as many images as
 * threads (so no two threads add into the same dx image), each running single-threaded
 * kernels; backward-filter sums per-thread partial gradients at the end. */

#include "conv.h"

#include <string.h>

#include "cpu_features.h"
#include "internal/conv_implicit.h"
#include "internal/gemm_kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Bytes of cols per chunk: about a quarter of the 1 MiB L2, leaving room for the packed A block. */
#define CONV_CHUNK_BYTES (256 * 1024)
/* Chunks hold a multiple of this many rows (a multiple of every micro-kernel's MR). */
#define CONV_ROW_QUANTUM 48
/* The implicit path needs at least this many outputs per image (every micro-kernel's MR). */
#define CONV_IMPLICIT_MIN_ROWS 32

static long total_rows(const conv2d_shape *s) { return (long)s->n * s->oh * s->ow; }
static int patch_size(const conv2d_shape *s) { return s->kh * s->kw * s->c; }
static size_t round16(size_t floats) { return (floats + 15) / 16 * 16; } // keeps 64-byte alignment
static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

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

/* ------------------------------------------------- implicit-path geometry */

/* Forward (and backward-filter): x padded to (OH + KH - 1, OW + KW - 1, C). */
static implicit_conv_geom forward_geom(const conv2d_shape *s)
{
    implicit_conv_geom g = {s->oh + s->kh - 1, s->ow + s->kw - 1, s->c, s->kh, s->kw, s->oh, s->ow, s->f};
    return g;
}

/* Backward-data: dout padded to (H + KH - 1, W + KW - 1, F), convolved into dx (H, W, C). */
static implicit_conv_geom backward_data_geom(const conv2d_shape *s)
{
    implicit_conv_geom g = {s->h + s->kh - 1, s->w + s->kw - 1, s->f, s->kh, s->kw, s->h, s->w, s->c};
    return g;
}

/* Stride 1, padding within the kernel on every side, and images big enough for a full tile. */
static int implicit_geometry_ok(const conv2d_shape *s)
{
    if (s->sh != 1 || s->sw != 1 || is_pointwise(s))
        return 0;
    int pad_bottom = s->oh + s->kh - 1 - s->h - s->pad_top, pad_right = s->ow + s->kw - 1 - s->w - s->pad_left;
    if (s->pad_top < 0 || s->pad_left < 0 || pad_bottom < 0 || pad_right < 0 || s->pad_top >= s->kh ||
        s->pad_left >= s->kw || pad_bottom >= s->kh || pad_right >= s->kw)
        return 0;
    implicit_conv_geom fg = forward_geom(s), bg = backward_data_geom(s);
    return implicit_conv_rows(&fg) >= CONV_IMPLICIT_MIN_ROWS && implicit_conv_rows(&bg) >= CONV_IMPLICIT_MIN_ROWS;
}

/* Which path each op takes. The thresholds come from timing the CIFAR-10 CNN's layers
 * on the AVX-512 EPYC (python -m minidl.bench --threads 1 --clock cpu). */
static int implicit_possible(const conv2d_shape *s, int threads)
{
    return implicit_geometry_ok(s) && s->n >= threads;
}

/* The forward kernel reads the image's rows in place: worth it only where the micro-kernel
 * gathers rows fast (AVX2's was 30% slower than im2col and packing for 64 filters). */
static int implicit_forward(const conv2d_shape *s, int threads)
{
    return implicit_possible(s, threads) && sgemm_active_kernel()->fast_row_gather;
}

/* Backward-filter reads the image column-wise (like a packed panel), so every kernel runs it
 * well; runs (KW * C) shorter than 32 floats leave the micro-kernel idle, though. */
static int implicit_backward_filter(const conv2d_shape *s, int threads)
{
    return implicit_possible(s, threads) && s->kw * s->c >= 32;
}

/* Backward-data as a forward conv computes C outputs per pixel in NR-wide tiles (C well
 * short of a multiple of NR wastes them), over the whole padded dout: for a "valid" conv
 * that is H * (W + KW - 1) outputs for OH * OW rows of dout, which costs more than col2im
 * once the ratio passes about 1.3. */
static int implicit_backward_data(const conv2d_shape *s, int threads)
{
    const int nr = sgemm_active_kernel()->nr;
    const int c_tiles = (s->c + nr - 1) / nr * nr;
    const double area_ratio = (double)s->h * (s->w + s->kw - 1) / ((double)s->oh * s->ow);
    return implicit_forward(s, threads) && 4 * c_tiles <= 5 * s->c && area_ratio <= 1.3;
}

/* -------------------------------------------------------- scratch layout
 * shared: the packed weights (one call's worth), then the flipped weights of backward-data;
 * per thread: a work area (cols chunk, or padded image + pitch dout + packed dout),
 * then a partial dweight (K, F) and dbias (F,). */

static size_t shared_floats(const conv2d_shape *s)
{
    size_t k = patch_size(s);
    size_t packed = max_size(sgemm_packed_b_floats(k, s->f), sgemm_packed_b_floats(s->f, k));
    if (implicit_geometry_ok(s)) {
        implicit_conv_geom fg = forward_geom(s), bg = backward_data_geom(s);
        packed = max_size(packed, max_size(implicit_conv_packed_weight_floats(&fg),
                                           implicit_conv_packed_weight_floats(&bg)));
    }
    return round16(packed) + round16(k * s->f);
}

/* The implicit backward-filter's work area: padded x, then dout in pitch layout, then it packed. */
static size_t padded_x_floats(const conv2d_shape *s)
{
    implicit_conv_geom g = forward_geom(s);
    return round16((size_t)g.hp * g.wp * g.c);
}

static size_t pitch_dout_floats(const conv2d_shape *s)
{
    implicit_conv_geom g = forward_geom(s);
    return round16((size_t)implicit_conv_rows(&g) * s->f);
}

static size_t work_floats(const conv2d_shape *s)
{
    size_t work = round16((size_t)chunk_rows(s) * patch_size(s));
    if (implicit_geometry_ok(s)) {
        implicit_conv_geom fg = forward_geom(s), bg = backward_data_geom(s);
        size_t filter = padded_x_floats(s) + pitch_dout_floats(s) +
                        sgemm_packed_b_floats((int)implicit_conv_rows(&fg), s->f);
        work = max_size(work, max_size(filter, (size_t)bg.hp * bg.wp * bg.c));
    }
    return round16(work);
}

static size_t per_thread_floats(const conv2d_shape *s)
{
    return work_floats(s) + round16((size_t)patch_size(s) * s->f) + round16(s->f);
}

static float *thread_work(const conv2d_shape *s, float *scratch, int t)
{
    return scratch + shared_floats(s) + per_thread_floats(s) * t;
}

static float *thread_partial_dweight(const conv2d_shape *s, float *scratch, int t)
{
    return thread_work(s, scratch, t) + work_floats(s);
}

static float *thread_partial_dbias(const conv2d_shape *s, float *scratch, int t)
{
    return thread_partial_dweight(s, scratch, t) + round16((size_t)patch_size(s) * s->f);
}

size_t conv2d_scratch_floats(const conv2d_shape *s)
{
    return shared_floats(s) + per_thread_floats(s) * minidl_num_threads();
}

static int usable_threads(const conv2d_shape *s, size_t scratch_floats)
{
    if (scratch_floats < shared_floats(s))
        return 0;
    long fit = (long)((scratch_floats - shared_floats(s)) / per_thread_floats(s));
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

/* dst += src; the two never overlap (restrict lets the compiler vectorize). */
static void add_floats(float *restrict dst, const float *restrict src, int count)
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
static void bias_relu(float *restrict out, const float *restrict bias, long rows, int f, int relu)
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

/* dst (HP, WP, C) = src (H, W, C) placed at (top, left), zeros around it. */
static void pad_image(float *dst, const float *src, int hp, int wp, int h, int w, int c, int top, int left)
{
    for (int y = 0; y < hp; y++) {
        float *row = dst + (size_t)y * wp * c; // row is (WP, C)
        int sy = y - top;
        if (sy < 0 || sy >= h) {
            memset(row, 0, sizeof(float) * wp * c);
            continue;
        }
        memset(row, 0, sizeof(float) * left * c);
        memcpy(row + (size_t)left * c, src + (size_t)sy * w * c, sizeof(float) * w * c);
        memset(row + (size_t)(left + w) * c, 0, sizeof(float) * (wp - left - w) * c);
    }
}

/* The image of x the implicit forward path reads: x itself when unpadded, else a padded copy in buf. */
static const float *padded_input(float *buf, const float *x_image, const conv2d_shape *s)
{
    implicit_conv_geom g = forward_geom(s);
    if (g.hp == s->h && g.wp == s->w)
        return x_image;
    pad_image(buf, x_image, g.hp, g.wp, s->h, s->w, s->c, s->pad_top, s->pad_left);
    return buf;
}

static void image_range(const conv2d_shape *s, int t, int nt, long *n0, long *n1)
{
    *n0 = (long)s->n * t / nt;
    *n1 = (long)s->n * (t + 1) / nt;
}

/* Forward and backward-data hand out images one at a time (schedule dynamic), so a thread
 * that loses its core to another job does not hold the others up at the closing barrier;
 * each image's result is the same whichever thread computes it. */
static void forward_implicit(float *out, const float *x, const float *weight, const float *bias,
                             const conv2d_shape *s, float *scratch, int threads, int relu)
{
    const implicit_conv_geom g = forward_geom(s);
    float *packed_weight = scratch;
    implicit_conv_pack_weight(packed_weight, weight, &g);
    const size_t in_image = (size_t)s->h * s->w * s->c, out_image = (size_t)s->oh * s->ow * s->f;
#pragma omp parallel num_threads(threads)
    {
        int t, nt;
        thread_index(&t, &nt);
        float *xpad = thread_work(s, scratch, t); // xpad is (HP, WP, C)
#pragma omp for schedule(dynamic, 1)
        for (long n = 0; n < s->n; n++)
            implicit_conv_forward_image(out + n * out_image, padded_input(xpad, x + n * in_image, s),
                                        packed_weight, bias, relu, &g);
    }
}

/* dx = the forward conv of dout, padded by (KH - 1 - pad_top, KW - 1 - pad_left), with
 * the kernel flipped in space and transposed in channels: w'[ky][kx][f][c] = w[KH-1-ky][KW-1-kx][c][f]. */
static void backward_data_implicit(float *dx, const float *dout, const float *weight,
                                   const conv2d_shape *s, float *scratch, int threads)
{
    const implicit_conv_geom g = backward_data_geom(s);
    const int kh = s->kh, kw = s->kw, c = s->c, f = s->f;
    float *packed_weight = scratch;
    float *flipped = scratch + shared_floats(s) - round16((size_t)patch_size(s) * f); // (KH, KW, F, C)
    for (int ky = 0; ky < kh; ky++)
        for (int kx = 0; kx < kw; kx++) {
            const float *src = weight + (size_t)((kh - 1 - ky) * kw + (kw - 1 - kx)) * c * f; // (C, F)
            float *dst = flipped + (size_t)(ky * kw + kx) * f * c;                           // (F, C)
            for (int ci = 0; ci < c; ci++)
                for (int fi = 0; fi < f; fi++)
                    dst[fi * c + ci] = src[ci * f + fi];
        }
    implicit_conv_pack_weight(packed_weight, flipped, &g);
    const size_t in_image = (size_t)s->h * s->w * c, out_image = (size_t)s->oh * s->ow * f;
#pragma omp parallel num_threads(threads)
    {
        int t, nt;
        thread_index(&t, &nt);
        float *dpad = thread_work(s, scratch, t); // dpad is (H + KH - 1, W + KW - 1, F)
#pragma omp for schedule(dynamic, 1)
        for (long n = 0; n < s->n; n++) {
            pad_image(dpad, dout + n * out_image, g.hp, g.wp, s->oh, s->ow, f, kh - 1 - s->pad_top,
                      kw - 1 - s->pad_left);
            implicit_conv_forward_image(dx + n * in_image, dpad, packed_weight, NULL, 0, &g);
        }
    }
}

/* Each thread sums its images' gradients into dw/db (thread 0 straight into dweight/dbias). */
static int backward_filter_implicit(float *dweight, float *dbias, const float *dout, const float *x,
                                    const conv2d_shape *s, float *scratch, int threads)
{
    int team = 1;
    const implicit_conv_geom g = forward_geom(s);
    const int f = s->f;
    const long rows = implicit_conv_rows(&g);
    const size_t in_image = (size_t)s->h * s->w * s->c, out_image = (size_t)s->oh * s->ow * f;
#pragma omp parallel num_threads(threads)
    {
        int t, nt;
        thread_index(&t, &nt);
        if (t == 0)
            team = nt;
        float *xpad = thread_work(s, scratch, t);                // xpad is (HP, WP, C)
        float *pitch = xpad + padded_x_floats(s);                 // pitch is (rows, F)
        float *packed = pitch + pitch_dout_floats(s);             // pitch packed as a GEMM's B
        float *dw = t == 0 ? dweight : thread_partial_dweight(s, scratch, t); // dw is (K, F)
        float *db = t == 0 ? dbias : thread_partial_dbias(s, scratch, t);     // db is (F,)
        int first = 1; // no image summed into dw yet
        if (db)
            memset(db, 0, sizeof(float) * f);
        long n0, n1; // a fixed share of the images, so the sums (and results) are reproducible
        image_range(s, t, nt, &n0, &n1);
        for (long n = n0; n < n1; n++) {
            const float *d = dout + n * out_image; // d is (OH, OW, F)
            for (long q = 0; q < rows; q++) {
                int oy = (int)(q / g.wp), ox = (int)(q % g.wp);
                if (ox < s->ow)
                    memcpy(pitch + q * f, d + ((size_t)oy * s->ow + ox) * f, sizeof(float) * f);
                else
                    memset(pitch + q * f, 0, sizeof(float) * f);
            }
            sgemm_pack_b(packed, pitch, f, 1, (int)rows, f);
            implicit_conv_backward_filter_image(dw, padded_input(xpad, x + n * in_image, s), packed,
                                                first ? 0.0f : 1.0f, &g);
            first = 0;
            if (dbias)
                for (long i = 0; i < (long)s->oh * s->ow; i++)
                    add_floats(db, d + i * f, f);
        }
        if (first) // this thread got no image: it contributes zeros
            memset(dw, 0, sizeof(float) * patch_size(s) * f);
    }
    return team;
}

int conv2d_forward(float *out, const float *x, const float *weight, const float *bias,
                   const conv2d_shape *s, float *scratch, size_t scratch_floats, int relu)
{
    // out is (N, OH, OW, F), x is (N, H, W, C), weight is (K = KH*KW*C, F), bias is (F,)
    int threads = usable_threads(s, scratch_floats);
    if (threads < 1)
        return -1;
    if (implicit_forward(s, threads)) {
        forward_implicit(out, x, weight, bias, s, scratch, threads, relu);
        return 0;
    }
    const int k = patch_size(s), f = s->f, pointwise = is_pointwise(s);
    const long chunk = chunk_rows(s);
    float *packed_weight = scratch; // weight (K, F) as the GEMM's B
    sgemm_pack_b(packed_weight, weight, f, 1, k, f);
#pragma omp parallel num_threads(threads)
    {
        int t, nt;
        thread_index(&t, &nt);
        float *cols = thread_work(s, scratch, t); // cols is (chunk, K)
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
    if (implicit_backward_data(s, threads)) {
        backward_data_implicit(dx, dout, weight, s, scratch, threads);
        return 0;
    }
    if (s->n < threads) { // too few images to split: one chunk loop, threaded GEMMs
        float *dcols = thread_work(s, scratch, 0); // dcols is (chunk, K)
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
        float *dcols = thread_work(s, scratch, t); // dcols is (chunk, K)
        long r0, r1, n0, n1;
        thread_rows(s, t, nt, &r0, &r1);
        image_range(s, t, nt, &n0, &n1); // the images this thread owns
        memset(dx + n0 * image, 0, sizeof(float) * image * (n1 - n0));
        for (long r = r0; r < r1; r += chunk) {
            long rows = r1 - r < chunk ? r1 - r : chunk;
            sgemm_prepacked_b_serial(dcols, k, dout + r * f, f, 1, packed_weight_t, (int)rows, k, f, 0.0f);
            col2im(dx, dcols, s, r, rows);
        }
    }
    return 0;
}

/* The im2col backward-filter: each thread sums its rows' gradients into dw/db. */
static int backward_filter_im2col(float *dweight, float *dbias, const float *dout, const float *x,
                                  const conv2d_shape *s, float *scratch, int threads)
{
    int team = 1;
    const int k = patch_size(s), f = s->f, pointwise = is_pointwise(s);
    const long chunk = chunk_rows(s);
#pragma omp parallel num_threads(threads)
    {
        int t, nt;
        thread_index(&t, &nt);
        if (t == 0)
            team = nt;
        float *cols = thread_work(s, scratch, t);                             // cols is (chunk, K)
        float *dw = t == 0 ? dweight : thread_partial_dweight(s, scratch, t); // dw is (K, F)
        float *db = t == 0 ? dbias : thread_partial_dbias(s, scratch, t);     // db is (F,)
        long r0, r1;
        thread_rows(s, t, nt, &r0, &r1);
        if (r1 <= r0) // no rows: contribute zeros
            memset(dw, 0, sizeof(float) * k * f);
        if (db)
            memset(db, 0, sizeof(float) * f);
        for (long r = r0; r < r1; r += chunk) {
            long rows = r1 - r < chunk ? r1 - r : chunk;
            const float *a = pointwise ? x + r * k : cols;
            if (!pointwise)
                im2col(cols, x, s, r, rows);
            // dw (K, F) (+)= a^T (K, rows) @ dout rows (rows, F)
            sgemm_strided_serial(dw, f, a, 1, k, dout + r * f, f, 1, k, f, (int)rows, 1.0f,
                                 r == r0 ? 0.0f : 1.0f);
            if (db)
                for (long i = 0; i < rows; i++)
                    add_floats(db, dout + (r + i) * f, f);
        }
    }
    return team;
}

int conv2d_backward_filter(float *dweight, float *dbias, const float *dout, const float *x,
                           const conv2d_shape *s, float *scratch, size_t scratch_floats)
{
    // dweight is (K = KH*KW*C, F), dbias is (F,), dout is (N, OH, OW, F), x is (N, H, W, C)
    int threads = usable_threads(s, scratch_floats);
    if (threads < 1)
        return -1;
    int team = implicit_backward_filter(s, threads) ? backward_filter_implicit(dweight, dbias, dout, x, s, scratch, threads)
                                        : backward_filter_im2col(dweight, dbias, dout, x, s, scratch, threads);
    // every thread t > 0 of the team left its partial sums (zeros when it had no work) in its scratch
    const int kf = patch_size(s) * s->f;
    for (int t = 1; t < team; t++) {
        add_floats(dweight, thread_partial_dweight(s, scratch, t), kf);
        if (dbias)
            add_floats(dbias, thread_partial_dbias(s, scratch, t), s->f);
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
