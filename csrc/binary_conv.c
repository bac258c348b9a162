/* Binary convolution (binary_conv.h): the portable loops around the xor-popcount micro-kernels
 * of binary_popcount_*.c. Output pixels are cut into blocks of BINARY_MR; each thread gathers a
 * block's windows into a patch buffer of words (a padding tap is zero words) and runs the
 * micro-kernel against every filter, which writes the dot products. With zero padding a
 * padding tap must count nothing, but its zero words were xor-ed with the kernel: the popcount
 * of that tap's kernel words (tap_counts, computed once per call) is taken back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "status.h"
#include "window.h"
#include "binary_conv.h"
#include "internal/binary_kernels.h"
#include "internal/parallel.h"

static int cpu_has_vpopcntdq(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
        return 0;
    return (ecx >> 14) & 1;
#else
    return 0;
#endif
}

int minidl_binary_popcount_path(void)
{
    int isa = minidl_cpu_isa();
    if (isa >= MINIDL_ISA_AVX512 && cpu_has_vpopcntdq())
        return 2;
    return isa >= MINIDL_ISA_AVX2 ? 1 : 0;
}

/* Word products (pixels x filters x window words) below which a convolution runs on one thread:
 * 4 M of them are 256 K vector iterations of the AVX-512 kernel, about 0.1 ms on one core, where
 * waking the second thread (passive OpenMP waiting) costs about as much as it saves; the dense
 * layers of zoo.binarynet() (batch 32, 256-512 inputs) took 0.16 ms each on two threads and
 * well under 0.1 ms on one. */
#define BINARY_PARALLEL_MIN (1 << 22)

typedef void (*popcount_kernel)(float *, const uint32_t *, const uint32_t *, const int32_t *, const float *,
                                int64_t, int64_t, int64_t);

void minidl_binary_pack_input(int32_t *bits, const float *x, int64_t pixels, int64_t c)
{
    void (*pack)(uint32_t *, const float *, int64_t, int64_t) = binary_pack_generic;
    switch (minidl_binary_popcount_path()) {
    case 2: pack = binary_pack_avx512; break;
    case 1: pack = binary_pack_avx2; break;
    }
    /* one thread below 256 K values, as the threshold packing (binary_threshold.c says why) */
    const int64_t cw = (c + 31) / 32, blocks = minidl_blocks(pixels * c);
    const int64_t per_block = (pixels + blocks - 1) / (blocks > 0 ? blocks : 1);
#pragma omp parallel for schedule(static) if (pixels * c >= (1 << 18)) num_threads(minidl_num_threads())
    for (int64_t block = 0; block < blocks; block++) {
        int64_t p0 = block * per_block, p1 = p0 + per_block < pixels ? p0 + per_block : pixels;
        if (p0 < p1)
            pack((uint32_t *)bits + p0 * cw, x + p0 * c, p1 - p0, c);
    }
}

void minidl_binary_pack_kernel(int32_t *bits, const float *weight, int64_t taps, int64_t c, int64_t f)
{
    const int64_t cw = (c + 31) / 32;
    for (int64_t t = 0; t < taps; t++)
        for (int64_t k = 0; k < cw; k++)
            for (int64_t j = 0; j < f; j++) {
                uint32_t word = 0;
                int64_t end = c - 32 * k < 32 ? c - 32 * k : 32;
                for (int64_t b = 0; b < end; b++)
                    word |= (uint32_t)(weight[(t * c + 32 * k + b) * f + j] < 0.0f) << b;
                bits[(t * cw + k) * f + j] = (int32_t)word;
            }
}

/* Row (iy, ix) of the input a tap reads, or -1 when the tap lies in the padding. */
static inline int64_t tap_pixel(const struct minidl_window *win, int64_t n, int64_t oy, int64_t ox,
                                int64_t ky, int64_t kx)
{
    int64_t iy = oy * win->sh - win->pad_top + ky * win->dh, ix = ox * win->sw - win->pad_left + kx * win->dw;
    if (iy < 0 || iy >= win->h || ix < 0 || ix >= win->w)
        return -1;
    return (n * win->h + iy) * win->w + ix;
}

/* An output pixel's position (image n, row oy, column ox), stepped through a block of pixels
 * without dividing (two 64-bit divisions per pixel cost as much as gathering its window). */
struct pixel_pos {
    int64_t n, oy, ox;
};

static inline struct pixel_pos pixel_at(const struct minidl_window *win, int64_t p)
{
    const int64_t ohw = win->oh * win->ow, n = p / ohw, rem = p - n * ohw;
    return (struct pixel_pos){n, rem / win->ow, rem % win->ow};
}

static inline void next_pixel(struct pixel_pos *q, const struct minidl_window *win)
{
    if (++q->ox == win->ow) {
        q->ox = 0;
        if (++q->oy == win->oh) {
            q->oy = 0;
            q->n++;
        }
    }
}

/* cw words from src to dst: constant sizes for the channel counts of binary networks, so that
 * the compiler moves them inline instead of calling memcpy per tap. */
static inline void copy_words(uint32_t *dst, const uint32_t *src, int64_t cw)
{
    switch (cw) {
    case 1: dst[0] = src[0]; break;
    case 2: memcpy(dst, src, 8); break;
    case 4: memcpy(dst, src, 16); break;
    case 8: memcpy(dst, src, 32); break;
    case 16: memcpy(dst, src, 64); break;
    default: memcpy(dst, src, (size_t)cw * sizeof(uint32_t));
    }
}

/* The window of the output pixel at q into dst (taps * cw words; a padding tap is zero words).
 * Returns a mask of the taps that lie in the padding (bit t for tap t < 64; with more taps,
 * any nonzero value: tap_in_padding then asks tap_pixel). */
static uint64_t gather_window(uint32_t *dst, const int32_t *bits, const struct minidl_window *win,
                              struct pixel_pos q, int64_t cw)
{
    const int64_t iy0 = q.oy * win->sh - win->pad_top, ix0 = q.ox * win->sw - win->pad_left;
    const uint32_t *image = (const uint32_t *)bits + q.n * win->h * win->w * cw;
    if (iy0 >= 0 && iy0 + (win->kh - 1) * win->dh < win->h && ix0 >= 0 &&
        ix0 + (win->kw - 1) * win->dw < win->w) {     /* the whole window inside: no checks */
        const int64_t tap_step = win->dw * cw;
        for (int64_t ky = 0; ky < win->kh; ky++) {
            const uint32_t *src = image + ((iy0 + ky * win->dh) * win->w + ix0) * cw;
            for (int64_t kx = 0; kx < win->kw; kx++, dst += cw, src += tap_step) copy_words(dst, src, cw);
        }
        return 0;
    }
    uint64_t padded = 0;
    for (int64_t ky = 0, t = 0; ky < win->kh; ky++) {
        const int64_t iy = iy0 + ky * win->dh;
        const int row_in = iy >= 0 && iy < win->h;
        for (int64_t kx = 0; kx < win->kw; kx++, t++, dst += cw) {
            const int64_t ix = ix0 + kx * win->dw;
            if (!row_in || ix < 0 || ix >= win->w) {
                memset(dst, 0, (size_t)cw * sizeof(uint32_t));
                padded |= t < 64 ? (uint64_t)1 << t : 1;
            } else {
                copy_words(dst, image + (iy * win->w + ix) * cw, cw);
            }
        }
    }
    return padded;
}

/* Whether tap t of the output pixel at q lies in the padding, given gather_window's mask. */
static inline int tap_in_padding(const struct minidl_window *win, uint64_t padded, struct pixel_pos q, int64_t t)
{
    const int64_t taps = win->kh * win->kw;
    if (taps <= 64)
        return (int)((padded >> t) & 1);
    return tap_pixel(win, q.n, q.oy, q.ox, t / win->kw, t % win->kw) < 0;
}

/* What every block of output pixels needs: the operands, the micro-kernel and, for zero
 * padding, the popcount of each tap's kernel words (tap_counts (taps, f)). */
struct conv_job {
    const int32_t *bits;
    const uint32_t *kb;
    const float *bias;
    const int32_t *tap_counts;
    const struct minidl_window *win;
    popcount_kernel kernel;
    int pad_value;
    int64_t cw, taps, words, f;
};

/* dst (rows, f) = the outputs of the pixels at q[0 .. rows) (rows <= BINARY_MR), through the
 * patch buffer (BINARY_MR * words words). With zero padding a padding tap must count nothing,
 * but its zero words were xor-ed with the kernel: its tap_counts are taken back. */
static void conv_rows(float *dst, uint32_t *patch, const struct conv_job *job, const struct pixel_pos *q,
                      int64_t rows)
{
    const struct minidl_window *win = job->win;
    const int64_t f = job->f;
    uint64_t padded[BINARY_MR];     /* bit t: tap t of the row lies in the padding */
    int32_t k_total[BINARY_MR];     /* the row's counted taps times C */
    int fix = 0;                    /* a row with zero-padding taps to take back */
    for (int64_t r = 0; r < rows; r++) {
        padded[r] = gather_window(patch + r * job->words, job->bits, win, q[r], job->cw);
        int64_t counted = job->taps;
        if (job->pad_value == 0 && padded[r]) {
            fix = 1;
            for (int64_t t = 0; t < job->taps; t++) counted -= tap_in_padding(win, padded[r], q[r], t);
        }
        k_total[r] = (int32_t)(counted * win->c);
    }
    /* a fixed-up row gets its bias after the fix, so that it is rounded once, as the
     * reference's (float)dot + bias */
    job->kernel(dst, patch, job->kb, k_total, fix ? NULL : job->bias, rows, job->words, f);
    if (!fix)
        return;
    for (int64_t r = 0; r < rows; r++) {
        float *row = dst + r * f;
        if (padded[r])     /* the padding taps' popcounts counted against k_total: out -2 each */
            for (int64_t t = 0; t < job->taps; t++)
                if (tap_in_padding(win, padded[r], q[r], t)) {
                    const int32_t *tc = job->tap_counts + t * f;
                    for (int64_t j = 0; j < f; j++) row[j] += (float)(2 * tc[j]);
                }
        if (job->bias)
            for (int64_t j = 0; j < f; j++) row[j] += job->bias[j];
    }
}

/* The job of one call; NULL tap_counts with zero padding means MINIDL_OUT_OF_MEMORY. */
static struct conv_job conv_job(const int32_t *bits, const int32_t *kernel_bits, const float *bias, int pad_value,
                                const struct minidl_window *win)
{
    struct conv_job job = {bits, (const uint32_t *)kernel_bits, bias, NULL, win, binary_popcount_generic, pad_value,
                           (win->c + 31) / 32, win->kh * win->kw, 0, win->f};
    job.words = job.taps * job.cw;
    switch (minidl_binary_popcount_path()) {
    case 2: job.kernel = binary_popcount_avx512; break;
    case 1: job.kernel = binary_popcount_avx2; break;
    }
    if (pad_value == 0) {
        int32_t *counts = calloc((size_t)(job.taps * job.f), sizeof(int32_t));
        if (counts)
            for (int64_t t = 0; t < job.taps; t++)
                for (int64_t k = 0; k < job.cw; k++)
                    for (int64_t j = 0; j < job.f; j++)
                        counts[t * job.f + j] += __builtin_popcount(job.kb[(t * job.cw + k) * job.f + j]);
        job.tap_counts = counts;
    }
    return job;
}

int minidl_binary_conv2d_forward(float *out, const int32_t *bits, const int32_t *kernel_bits, const float *bias,
                                 int pad_value, const struct minidl_window *win)
{
    const struct conv_job job = conv_job(bits, kernel_bits, bias, pad_value, win);
    if (pad_value == 0 && !job.tap_counts)
        return MINIDL_OUT_OF_MEMORY;
    const int64_t pixels = win->n * win->oh * win->ow, blocks = (pixels + BINARY_MR - 1) / BINARY_MR;
    int failed = 0;
#pragma omp parallel num_threads(minidl_num_threads()) if (pixels * job.f * job.words >= BINARY_PARALLEL_MIN)
    {
        uint32_t *patch = malloc((size_t)(BINARY_MR * job.words) * sizeof(uint32_t));
        if (!patch) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(static)
        for (int64_t block = 0; block < blocks; block++) {
            if (!patch)
                continue;
            const int64_t p0 = block * BINARY_MR;
            const int64_t rows = pixels - p0 < BINARY_MR ? pixels - p0 : BINARY_MR;
            struct pixel_pos q[BINARY_MR];
            q[0] = pixel_at(win, p0);
            for (int64_t r = 1; r < rows; r++) {
                q[r] = q[r - 1];
                next_pixel(&q[r], win);
            }
            conv_rows(out + p0 * job.f, patch, &job, q, rows);
        }
        free(patch);
    }
    free((void *)job.tap_counts);
    return failed ? MINIDL_OUT_OF_MEMORY : MINIDL_OK;
}

/* best (f) = the larger of best and v elementwise (of equal values the earlier stays, as in
 * max_pool2d_forward). A plain comparison, which vectorizes: the only NaN these sums can hold
 * comes from a NaN bias, the same in every row of a filter, and then stays NaN here as there. */
static void max_merge(float *restrict best, const float *restrict v, int64_t f)
{
    for (int64_t j = 0; j < f; j++) best[j] = v[j] > best[j] ? v[j] : best[j];
}

int minidl_binary_conv2d_pool_forward(float *out, const int32_t *bits, const int32_t *kernel_bits,
                                      const float *bias, int pad_value, const struct minidl_window *win,
                                      const struct minidl_window *pool)
{
    const struct conv_job job = conv_job(bits, kernel_bits, bias, pad_value, win);
    if (pad_value == 0 && !job.tap_counts)
        return MINIDL_OUT_OF_MEMORY;
    const int64_t f = job.f, pooled = pool->n * pool->oh * pool->ow;
    const int64_t work = win->n * win->oh * win->ow * f * job.words;
    int failed = 0;
#pragma omp parallel num_threads(minidl_num_threads()) if (work >= BINARY_PARALLEL_MIN)
    {
        uint32_t *patch = malloc((size_t)(BINARY_MR * job.words) * sizeof(uint32_t));
        float *rows_out = malloc((size_t)(BINARY_MR * f) * sizeof(float));
        if (!patch || !rows_out) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(static)
        for (int64_t p = 0; p < pooled; p++) {
            if (!patch || !rows_out)
                continue;
            const struct pixel_pos at = pixel_at(pool, p);
            float *o = out + p * f;
            struct pixel_pos q[BINARY_MR];
            int64_t rows = 0, first = 1;
            /* the window's convolution outputs in max_pool2d's order (row by row), BINARY_MR
             * at a time; positions in the pool's padding are skipped (they never win) */
            for (int64_t ky = 0; ky < pool->kh; ky++) {
                const int64_t oy = at.oy * pool->sh - pool->pad_top + ky;
                for (int64_t kx = 0; kx < pool->kw; kx++) {
                    const int64_t ox = at.ox * pool->sw - pool->pad_left + kx;
                    const int last = ky == pool->kh - 1 && kx == pool->kw - 1;
                    if (oy >= 0 && oy < win->oh && ox >= 0 && ox < win->ow)
                        q[rows++] = (struct pixel_pos){at.n, oy, ox};
                    if (rows == BINARY_MR || (last && rows > 0)) {
                        conv_rows(rows_out, patch, &job, q, rows);
                        for (int64_t r = 0; r < rows; r++) {
                            if (first)
                                memcpy(o, rows_out, (size_t)f * sizeof(float));
                            else
                                max_merge(o, rows_out + r * f, f);
                            first = 0;
                        }
                        rows = 0;
                    }
                }
            }
            if (first)      /* a window wholly in the padding (not made by pool2d_plan) */
                for (int64_t j = 0; j < f; j++) o[j] = -INFINITY;
        }
        free(patch);
        free(rows_out);
    }
    free((void *)job.tap_counts);
    return failed ? MINIDL_OUT_OF_MEMORY : MINIDL_OK;
}

void minidl_binary_conv2d_forward_reference(float *out, const int32_t *bits, const int32_t *kernel_bits,
                                            const float *bias, int pad_value, const struct minidl_window *win)
{
    const int64_t cw = (win->c + 31) / 32;
    for (int64_t n = 0; n < win->n; n++)
        for (int64_t oy = 0; oy < win->oh; oy++)
            for (int64_t ox = 0; ox < win->ow; ox++)
                for (int64_t j = 0; j < win->f; j++) {
                    int64_t dot = 0;
                    for (int64_t ky = 0; ky < win->kh; ky++)
                        for (int64_t kx = 0; kx < win->kw; kx++) {
                            int64_t src = tap_pixel(win, n, oy, ox, ky, kx);
                            if (src < 0 && pad_value == 0)
                                continue;
                            for (int64_t ch = 0; ch < win->c; ch++) {
                                int64_t k = ch / 32, b = ch % 32, t = ky * win->kw + kx;
                                int x_negative = src < 0 ? 0 : ((uint32_t)bits[src * cw + k] >> b) & 1;
                                int w_negative = ((uint32_t)kernel_bits[(t * cw + k) * win->f + j] >> b) & 1;
                                dot += x_negative == w_negative ? 1 : -1;
                            }
                        }
                    out[((n * win->oh + oy) * win->ow + ox) * win->f + j] = (float)dot + (bias ? bias[j] : 0.0f);
                }
}
