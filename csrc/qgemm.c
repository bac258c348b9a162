/* int8 inference (csrc/qgemm.h): the portable loops around the micro-kernels of
 * qgemm_ukernel_*.c, the uint8 im2col of the convolution, and the (de)quantization and max
 * pooling of uint8 tensors. The micro-kernel follows minidl_cpu_isa(): avx512 runs the VNNI one
 * when the CPU has AVX512_VNNI (else the AVX2 one), avx2 the AVX2 one, generic the plain one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpu_features.h"
#include "qgemm.h"
#include "status.h"
#include "internal/checked_alloc.h"
#include "internal/qgemm_kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
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
    return name;
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

int minidl_qgemm_forward(uint8_t *out_u8, float *out_f32, const uint8_t *a, const int8_t *w,
                         const int32_t *column_offset, const float *multiplier, int32_t out_zero_point,
                         int32_t relu, int64_t m, int64_t k, int64_t n)
{
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

/* cols (oh * ow, kh * kw * c) uint8 of image x (h, w, c); padding holds pad_value. */
static void im2col_u8(uint8_t *cols, const uint8_t *x, uint8_t pad_value, const struct minidl_window *win)
{
    int64_t c = win->c, krow = win->kw * c, kdim = win->kh * krow;
    for (int64_t oy = 0; oy < win->oh; oy++) {
        for (int64_t ox = 0; ox < win->ow; ox++) {
            uint8_t *dst = cols + (oy * win->ow + ox) * kdim;
            int64_t y0 = oy * win->sh - win->pad_top, x0 = ox * win->sw - win->pad_left;
            for (int64_t ky = 0; ky < win->kh; ky++, dst += krow) {
                int64_t y = y0 + ky;
                if (y < 0 || y >= win->h) {
                    memset(dst, pad_value, (size_t)krow);
                    continue;
                }
                int64_t first = x0 < 0 ? -x0 : 0;
                int64_t last = x0 + win->kw > win->w ? win->w - x0 : win->kw; /* exclusive */
                if (first > 0)
                    memset(dst, pad_value, (size_t)(first * c));
                if (last > first)
                    memcpy(dst + first * c, x + (y * win->w + x0 + first) * c, (size_t)((last - first) * c));
                if (last < win->kw)
                    memset(dst + (last > first ? last : first) * c, pad_value,
                           (size_t)((win->kw - (last > first ? last : first)) * c));
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
    /* one im2col buffer per thread, allocated before the threads start */
    uint8_t *scratch = NULL;
    if (!direct) {
        scratch = (uint8_t *)minidl_alloc((size_t)(threads * pixels * kdim));
        if (!scratch)
            return MINIDL_OUT_OF_MEMORY;
    }
#pragma omp parallel num_threads(threads)
    {
#ifdef _OPENMP
        uint8_t *cols = direct ? NULL : scratch + (int64_t)omp_get_thread_num() * pixels * kdim;
#else
        uint8_t *cols = scratch;
#endif
#pragma omp for schedule(dynamic)
        for (int64_t i = 0; i < win->n; i++) {
            const uint8_t *rows = x + i * image;
            if (!direct) {
                im2col_u8(cols, rows, (uint8_t)x_zero_point, win);
                rows = cols;
            }
            qgemm_rows(ukernel, out_u8 ? out_u8 + i * pixels * f : NULL,
                       out_f32 ? out_f32 + i * pixels * f : NULL, rows, kdim, w, column_offset,
                       multiplier, out_zero_point, relu, 0, pixels, kdim, f);
        }
    }
    free(scratch);
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
    const int64_t half = (int64_t)1 << (MINIDL_QADD_SHIFT - 1);
    const int32_t lo = relu ? out_zero_point : 0;
#pragma omp parallel for num_threads(count >= (1 << 16) ? minidl_num_threads() : 1) schedule(static)
    for (int64_t i = 0; i < count; i++) {
        int64_t acc = (int64_t)(a[i] - a_zero_point) * a_multiplier + (int64_t)(b[i] - b_zero_point) * b_multiplier;
        int64_t q = ((acc + half) >> MINIDL_QADD_SHIFT) + out_zero_point;
        out[i] = (uint8_t)(q < lo ? lo : (q > 255 ? 255 : q));
    }
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
