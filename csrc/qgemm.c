/* int8 inference (csrc/qgemm.h): the portable loops around the micro-kernels of
 * qgemm_ukernel_*.c, the uint8 im2col of the convolution, and the (de)quantization and max
 * pooling of uint8 tensors. The micro-kernel follows minidl_cpu_isa(): avx512 runs AMX tiles
 * (qgemm_amx.c) when minidl_amx_active(), else the VNNI one when the CPU has AVX512_VNNI (else
 * the AVX2 one), avx2 the AVX2 one, generic the plain one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "amx.h"
#include "cpu_features.h"
#include "qgemm.h"
#include "status.h"
#include "internal/checked_alloc.h"
#include "internal/qadd_impl.h"
#include "internal/qgemm_kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

int minidl_cpu_has_avx512_vnni(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned int eax, ebx, ecx, edx;
    if (minidl_cpu_best_isa() < MINIDL_ISA_AVX512 || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
        return 0;
    return (ecx >> 11) & 1;
#else
    return 0;
#endif
}

/* Whether the AMX tiles run (qgemm_amx.c) instead of a micro-kernel. */
static int use_amx(void)
{
#ifdef MINIDL_HAVE_AMX_INT8
    return minidl_amx_active();
#else
    return 0;
#endif
}

static qgemm_ukernel_fn active_ukernel(const char **name)
{
    const char *unused;
    if (!name)
        name = &unused;
#if defined(__x86_64__) || defined(__i386__)
    int isa = minidl_cpu_isa();
    if (isa >= MINIDL_ISA_AVX512 && minidl_cpu_has_avx512_vnni()) {
        *name = "vnni";
        return qgemm_ukernel_vnni;
    }
    if (isa >= MINIDL_ISA_AVX2) {
        *name = "avx2";
        return qgemm_ukernel_avx2;
    }
#endif
    *name = "generic";
    return qgemm_ukernel_generic;
}

const char *minidl_qgemm_path(void)
{
    const char *name;
    active_ukernel(&name);
    return use_amx() ? "amx" : name;
}

static int64_t padded_n(int64_t n) { return (n + MINIDL_QGEMM_NR - 1) / MINIDL_QGEMM_NR * MINIDL_QGEMM_NR; }

/* rows [r0, r1) of out = epilogue(a @ w), a's row r at a + r * lda, out's at out + r * n. */
static void qgemm_rows(qgemm_ukernel_fn ukernel, uint8_t *out_u8, float *out_f32, const uint8_t *a,
                       int64_t lda, const int8_t *w, const int32_t *column_offset, const float *multiplier,
                       int32_t out_zero_point, int32_t relu, int64_t r0, int64_t r1, int64_t k, int64_t n)
{
    int64_t np = padded_n(n);
    for (int64_t r = r0; r < r1; r += QGEMM_MR) {
        int rows = r1 - r < QGEMM_MR ? (int)(r1 - r) : QGEMM_MR;
        for (int64_t j = 0; j < n; j += MINIDL_QGEMM_NR) {
            struct qgemm_epilogue e = {
                out_u8 ? out_u8 + j : NULL, out_f32 ? out_f32 + j : NULL, n,
                column_offset + j, multiplier + j, out_zero_point, relu};
            int cols = n - j < MINIDL_QGEMM_NR ? (int)(n - j) : MINIDL_QGEMM_NR;
            /* row0 is relative to the output pointers, which the caller set at row 0 */
            ukernel(&e, r, rows, cols, a + r * lda, lda, w + j * 4, k, np);
        }
    }
}

/* The calling thread's scratch of at least `need` bytes, kept for the thread's life and grown on
 * demand, so that a predict loop does not map and zero fresh pages at every convolution; the
 * OpenMP threads of one call share it in slices. NULL when growing failed. */
static __thread uint8_t *scratch_buf;
static __thread size_t scratch_cap;

static uint8_t *caller_scratch(size_t need)
{
    if (need > scratch_cap) {
        free(scratch_buf);
        scratch_buf = (uint8_t *)minidl_alloc(need);
        scratch_cap = scratch_buf ? need : 0;
    }
    return scratch_buf;
}

#ifdef MINIDL_HAVE_AMX_INT8
/* The AMX tail copy of w's last k block (qgemm_amx_weights_tail); 0, or 1 when it is needed
 * and could not be allocated. */
static int amx_tail(int8_t **tail, const int8_t *w, int64_t k, int64_t n)
{
    *tail = qgemm_amx_weights_tail(w, k, padded_n(n));
    return !*tail && (k + 3) / 4 * 4 != qgemm_amx_k64(k);
}

static int qgemm_forward_amx(uint8_t *out_u8, float *out_f32, const uint8_t *a, const int8_t *w,
                             const int32_t *column_offset, const float *multiplier, int32_t out_zero_point,
                             int32_t relu, int64_t m, int64_t k, int64_t n)
{
    int8_t *wtail;
    if (amx_tail(&wtail, w, k, n))
        return MINIDL_OUT_OF_MEMORY;
    int64_t blocks = (m + 31) / 32, apack = QGEMM_AMX_APACK(k);
    int threads = m * k * n >= (1 << 18) ? minidl_num_threads() : 1;
    if (threads > blocks)
        threads = (int)blocks;
    uint8_t *scratch = caller_scratch((size_t)(threads * apack));
    if (!scratch) {
        free(wtail);
        return MINIDL_OUT_OF_MEMORY;
    }
    struct qgemm_epilogue e = {out_u8, out_f32, n, column_offset, multiplier, out_zero_point, relu};
#pragma omp parallel num_threads(threads)
    {
#ifdef _OPENMP
        uint8_t *mine = scratch + (int64_t)omp_get_thread_num() * apack;
#else
        uint8_t *mine = scratch;
#endif
        qgemm_amx_begin();
#pragma omp for schedule(static)
        for (int64_t b = 0; b < blocks; b++)
            qgemm_amx_rows(&e, b * 32, b * 32 + 32 < m ? b * 32 + 32 : m, a, k, w, wtail, k, n,
                           padded_n(n), mine);
        qgemm_amx_end();
    }
    free(wtail);
    return MINIDL_OK;
}
#endif

int minidl_qgemm_forward(uint8_t *out_u8, float *out_f32, const uint8_t *a, const int8_t *w,
                         const int32_t *column_offset, const float *multiplier, int32_t out_zero_point,
                         int32_t relu, int64_t m, int64_t k, int64_t n)
{
#ifdef MINIDL_HAVE_AMX_INT8
    if (use_amx())
        return qgemm_forward_amx(out_u8, out_f32, a, w, column_offset, multiplier, out_zero_point, relu,
                                 m, k, n);
#endif
    qgemm_ukernel_fn ukernel = active_ukernel(NULL);
    int64_t blocks = (m + QGEMM_MR - 1) / QGEMM_MR;
    int threads = m * k * n >= (1 << 16) ? minidl_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t b = 0; b < blocks; b++) {
        int64_t r0 = b * QGEMM_MR, r1 = r0 + QGEMM_MR < m ? r0 + QGEMM_MR : m;
        qgemm_rows(ukernel, out_u8, out_f32, a, k, w, column_offset, multiplier, out_zero_point, relu,
                   r0, r1, k, n);
    }
    return MINIDL_OK;
}

/* dst[0, n) = src[0, n) / = value, inline: im2col copies runs of kw * c bytes (48 for a 3x3
 * window of 16 channels), too short for a call to memcpy to pay (it took a quarter of an AMX
 * int8 predict). 16-byte SSE2 moves (every x86-64 has them; GCC would turn a plain byte loop
 * back into a memcpy call), the rest of a run by memcpy. */
static inline void copy_run(uint8_t *dst, const uint8_t *src, int64_t n)
{
#if defined(__SSE2__)
    for (; n >= 16; n -= 16, dst += 16, src += 16)
        _mm_storeu_si128((__m128i *)dst, _mm_loadu_si128((const __m128i *)src));
#endif
    if (n > 0)
        memcpy(dst, src, (size_t)n);
}

static inline void fill_run(uint8_t *dst, uint8_t value, int64_t n)
{
#if defined(__SSE2__)
    const __m128i v = _mm_set1_epi8((char)value);
    for (; n >= 16; n -= 16, dst += 16)
        _mm_storeu_si128((__m128i *)dst, v);
#endif
    if (n > 0)
        memset(dst, value, (size_t)n);
}

/* cols (oh * ow, kh * kw * c) uint8 of image x (h, w, c), row stride ldc (>= kh * kw * c; the
 * bytes from kh * kw * c to ldc are not written); padding holds pad_value. */
static void im2col_u8(uint8_t *cols, int64_t ldc, const uint8_t *x, uint8_t pad_value,
                      const struct minidl_window *win)
{
    int64_t c = win->c, krow = win->kw * c;
    for (int64_t oy = 0; oy < win->oh; oy++) {
        for (int64_t ox = 0; ox < win->ow; ox++) {
            uint8_t *dst = cols + (oy * win->ow + ox) * ldc;
            int64_t y0 = oy * win->sh - win->pad_top, x0 = ox * win->sw - win->pad_left;
            for (int64_t ky = 0; ky < win->kh; ky++, dst += krow) {
                int64_t y = y0 + ky;
                if (y < 0 || y >= win->h) {
                    fill_run(dst, pad_value, krow);
                    continue;
                }
                int64_t first = x0 < 0 ? -x0 : 0;
                int64_t last = x0 + win->kw > win->w ? win->w - x0 : win->kw; /* exclusive */
                if (first > 0)
                    fill_run(dst, pad_value, first * c);
                if (last > first)
                    copy_run(dst + first * c, x + (y * win->w + x0 + first) * c, (last - first) * c);
                if (last < win->kw)
                    fill_run(dst + (last > first ? last : first) * c, pad_value,
                             (win->kw - (last > first ? last : first)) * c);
            }
        }
    }
}

int minidl_qconv2d_forward(uint8_t *out_u8, float *out_f32, const uint8_t *x, const int8_t *w,
                           const int32_t *column_offset, const float *multiplier, int32_t out_zero_point,
                           int32_t relu, int32_t x_zero_point, const struct minidl_window *win)
{
    qgemm_ukernel_fn ukernel = active_ukernel(NULL);
    int64_t pixels = win->oh * win->ow, kdim = win->kh * win->kw * win->c, f = win->f;
    int64_t image = win->h * win->w * win->c;
    /* a 1x1 stride-1 unpadded convolution reads its input rows in place */
    int direct = win->kh == 1 && win->kw == 1 && win->sh == 1 && win->sw == 1 &&
                 win->pad_top == 0 && win->pad_left == 0 && win->oh == win->h && win->ow == win->w;
    int threads = win->n > 1 ? minidl_num_threads() : 1;
    if (threads > win->n)
        threads = (int)win->n;
    int amx = use_amx();
    (void)amx;          /* used only where the AMX path is compiled */
    int8_t *wtail = NULL;
    /* per thread: the im2col rows (ldc apart) and, for AMX's direct case, its block of
       activation rows; allocated before the threads start */
    int64_t ldc = kdim, cols_bytes = direct ? 0 : pixels * kdim, apack = 0;
#ifdef MINIDL_HAVE_AMX_INT8
    if (amx && amx_tail(&wtail, w, kdim, f))
        return MINIDL_OUT_OF_MEMORY;
    if (amx && !direct) {
        /* im2col writes AMX's tile-ready layout: rows k64 apart, zero from kdim to k64 and
           past the last pixel up to a 32-row block (zeroed once per call below) */
        ldc = qgemm_amx_k64(kdim);
        cols_bytes = (pixels + 31) / 32 * 32 * ldc;
    }
    if (amx && direct)
        apack = QGEMM_AMX_APACK(kdim);
#endif
    int64_t per_thread = cols_bytes + apack;
    uint8_t *scratch = NULL;
    if (per_thread) {
        scratch = caller_scratch((size_t)(threads * per_thread));
        if (!scratch) {
            free(wtail);
            return MINIDL_OUT_OF_MEMORY;
        }
    }
#pragma omp parallel num_threads(threads)
    {
#ifdef _OPENMP
        uint8_t *mine = scratch ? scratch + (int64_t)omp_get_thread_num() * per_thread : NULL;
#else
        uint8_t *mine = scratch;
#endif
        uint8_t *cols = direct ? NULL : mine;
        /* AMX's tile-ready rows are zero from kdim to ldc, and so are the rows past the last
           pixel: set once here, im2col never writes there (zeroing them at every image cost
           an eighth of a resnet20 predict) */
        if (cols && cols_bytes > pixels * kdim)
            for (int64_t p = 0; p < cols_bytes / ldc; p++)
                memset(cols + p * ldc + (p < pixels ? kdim : 0), 0, (size_t)(p < pixels ? ldc - kdim : ldc));
#ifdef MINIDL_HAVE_AMX_INT8
        if (amx)
            qgemm_amx_begin();
#endif
#pragma omp for schedule(dynamic)
        for (int64_t i = 0; i < win->n; i++) {
            const uint8_t *rows = x + i * image;
            if (!direct) {
                im2col_u8(cols, ldc, rows, (uint8_t)x_zero_point, win);
                rows = cols;
            }
            uint8_t *o8 = out_u8 ? out_u8 + i * pixels * f : NULL;
            float *o32 = out_f32 ? out_f32 + i * pixels * f : NULL;
#ifdef MINIDL_HAVE_AMX_INT8
            if (amx) {
                struct qgemm_epilogue e = {o8, o32, f, column_offset, multiplier, out_zero_point, relu};
                qgemm_amx_rows(&e, 0, pixels, rows, ldc, w, wtail, kdim, f, padded_n(f),
                               direct ? mine : NULL);
                continue;
            }
#endif
            qgemm_rows(ukernel, o8, o32, rows, kdim, w, column_offset, multiplier, out_zero_point, relu,
                       0, pixels, kdim, f);
        }
#ifdef MINIDL_HAVE_AMX_INT8
        if (amx)
            qgemm_amx_end();
#endif
    }
    free(wtail);
    return MINIDL_OK;
}

void minidl_quantize_u8(uint8_t *out, const float *x, float inv_scale, int32_t zero_point, int64_t count)
{
    /* clamp to the integers [-zero_point, 255 - zero_point] first (rounding then clamping gives
       the same), then round to nearest even by adding and subtracting 1.5 * 2^23: exact for
       |v| < 2^22, and plain arithmetic the compiler vectorizes (rintf is a libm call here) */
    const float lo = (float)-zero_point, hi = (float)(255 - zero_point), magic = 12582912.0f;
#pragma omp parallel for num_threads(count >= (1 << 16) ? minidl_num_threads() : 1) schedule(static)
    for (int64_t i = 0; i < count; i++) {
        float v = x[i] * inv_scale;
        v = v != v ? 0.0f : v;   /* NaN becomes the zero point (a real 0), as in the reference */
        v = v < lo ? lo : (v > hi ? hi : v);
        out[i] = (uint8_t)((int32_t)((v + magic) - magic) + zero_point);
    }
}

void minidl_dequantize_u8(float *out, const uint8_t *x, float scale, int32_t zero_point, int64_t count)
{
#pragma omp parallel for num_threads(count >= (1 << 16) ? minidl_num_threads() : 1) schedule(static)
    for (int64_t i = 0; i < count; i++)
        out[i] = scale * (float)((int32_t)x[i] - zero_point);
}

void minidl_add_u8(uint8_t *out, const uint8_t *a, const uint8_t *b, int32_t a_zero_point,
                   int32_t b_zero_point, int64_t a_multiplier, int64_t b_multiplier,
                   int32_t out_zero_point, int32_t relu, int64_t count)
{
    int threads = count >= (1 << 16) ? minidl_num_threads() : 1;
#if defined(__x86_64__) || defined(__i386__)
    int wide = minidl_cpu_isa() >= MINIDL_ISA_AVX512;
#else
    int wide = 0;
#endif
    /* whole 4 KiB chunks per thread, the loop of internal/qadd_impl.h on each */
    int64_t chunk = 4096, chunks = (count + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t c = 0; c < chunks; c++) {
        int64_t begin = c * chunk, end = begin + chunk < count ? begin + chunk : count;
#if defined(__x86_64__) || defined(__i386__)
        if (wide) {
            qadd_u8_avx512(out, a, b, a_zero_point, b_zero_point, a_multiplier, b_multiplier, out_zero_point,
                           relu, begin, end);
            continue;
        }
#endif
        qadd_u8_range(out, a, b, a_zero_point, b_zero_point, a_multiplier, b_multiplier, out_zero_point, relu,
                      begin, end);
    }
    (void)wide;
}

void minidl_max_pool2d_u8(uint8_t *out, const uint8_t *x, const struct minidl_window *win)
{
    int64_t c = win->c;
#pragma omp parallel for num_threads(win->n > 1 ? minidl_num_threads() : 1) schedule(static)
    for (int64_t i = 0; i < win->n; i++) {
        const uint8_t *img = x + i * win->h * win->w * c;
        for (int64_t oy = 0; oy < win->oh; oy++) {
            for (int64_t ox = 0; ox < win->ow; ox++) {
                uint8_t *dst = out + ((i * win->oh + oy) * win->ow + ox) * c;
                memset(dst, 0, (size_t)c);
                int64_t y0 = oy * win->sh - win->pad_top, x0 = ox * win->sw - win->pad_left;
                for (int64_t y = y0 < 0 ? 0 : y0; y < y0 + win->kh && y < win->h; y++)
                    for (int64_t xx = x0 < 0 ? 0 : x0; xx < x0 + win->kw && xx < win->w; xx++) {
                        const uint8_t *src = img + (y * win->w + xx) * c;
                        for (int64_t ch = 0; ch < c; ch++)
                            dst[ch] = src[ch] > dst[ch] ? src[ch] : dst[ch];
                    }
            }
        }
    }
}
