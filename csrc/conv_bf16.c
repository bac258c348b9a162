/* The bf16 convolutions of gemm_bf16.h: im2col GEMMs on the bf16 driver, the im2col columns
 * rounded and packed straight from the image (no float32 im2col matrix is written).
 *
 *   forward          out (P, F)  = im2col(x) (P, K) @ weight (K, F) + bias
 *   backward data    dx         += col2im(dout (P, F) @ weight^T (F, K))
 *   backward filter  dweight^T (F, K) = dout^T (F, P) @ im2col(x) (P, K)
 * with P = N * OH * OW output pixels and K = KH * KW * C. Backward filter is computed transposed
 * so that im2col(x), the large operand, is the one packed in K-pair rows (read two pixel rows at
 * a time, in place) and dout^T the small one. Stride-1 convolutions skip im2col altogether
 * (conv_bf16_implicit.c): the forward and the kernel gradient read bf16 copies of the image in
 * place, and backward data at stride 1 is a forward convolution of dout with the rotated kernel.
 * Grouped convolutions, forwards with fewer than 64 products per output, and every call when AMX
 * does not run, take the fallback: rounded copies of the operands, then conv.h's kernels. */
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "conv.h"
#include "cpu_features.h"
#include "gemm_bf16.h"
#include "internal/checked_alloc.h"
#include "internal/gemm_bf16_core.h"
#include "status.h"

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static float *rounded(const float *t, int64_t count)
{
    float *copy = minidl_alloc_floats((size_t)(count > 0 ? count : 1));
    if (copy)
        minidl_round_bfloat16(copy, t, count);
    return copy;
}

static int64_t image_floats(const struct minidl_window *s)
{
    return s->n * s->h * s->w * s->c;
}

static int64_t out_floats(const struct minidl_window *s)
{
    return s->n * s->oh * s->ow * s->f;
}

static int64_t weight_floats(const struct minidl_window *s)
{
    return s->kh * s->kw * (s->c / s->groups) * s->f;
}

static int native(const struct minidl_window *s)
{
    return bf16_gemm_native() && s->groups == 1;
}

/* The forward runs on the tiles with at least 64 products per output: below that (a CNN's first
 * layer, 3 channels: K = 27) packing the im2col rows costs more than the tiles save, and rounded
 * copies + the float32 kernel ran 1.7x faster (keras_cnn's first layer, batch 128). */
static int native_forward(const struct minidl_window *s)
{
    return native(s) && s->kh * s->kw * s->c >= 64;
}

/* ------------------------------------------------------------------ col2im writer */
/* block row i is output pixel i0 + i, column j is (ky, kx, c) = j0 + j: add it to the input
 * position the window read it from. Indices advance run by run (no division per element). */
static void col2im_write(const struct bf16_writer *w, const float *block, int64_t i0, int64_t j0, int mb,
                         int nb, int first)
{
    const struct minidl_window *s = w->window;
    (void)first;
    int64_t n = i0 / (s->oh * s->ow), oy = i0 / s->ow % s->oh, ox = i0 % s->ow;
    const int64_t ky0 = j0 / (s->kw * s->c), kx0 = j0 / s->c % s->kw, ch0 = j0 % s->c;
    for (int i = 0; i < mb; i++) {
        const float *acc = block + i * BF16_NR;
        float *image = w->c + n * s->h * s->w * s->c;
        int64_t ky = ky0, kx = kx0, ch = ch0;
        for (int64_t j = 0; j < nb;) {
            const int64_t run = min64(s->c - ch, nb - j);
            const int64_t iy = oy * s->sh - s->pad_top + ky * s->dh, ix = ox * s->sw - s->pad_left + kx * s->dw;
            if (iy >= 0 && iy < s->h && ix >= 0 && ix < s->w) {
                float *d = image + (iy * s->w + ix) * s->c + ch;
                const float *a = acc + j;
                for (int64_t t = 0; t < run; t++)
                    d[t] += a[t];
            }
            j += run;
            ch = 0;
            if (++kx == s->kw) {
                kx = 0;
                ky++;
            }
        }
        if (++ox == s->ow) {   // the next output pixel
            ox = 0;
            if (++oy == s->oh) {
                oy = 0;
                n++;
            }
        }
    }
}

/* Threads' shares of `extent` items, in whole `unit`s: part t is [t * per, min(extent, (t + 1) * per)). */
static int split(int64_t extent, int64_t unit, int64_t *per)
{
    const int threads = minidl_num_threads();
    const int64_t units = (extent + unit - 1) / unit;
    const int parts = (int)(units < threads ? (units > 0 ? units : 1) : threads);
    *per = (units + parts - 1) / parts * unit;
    return parts;
}

/* ------------------------------------------------------------------ forward */
static int forward_native(float *out, const float *x, const float *weight, const float *bias,
                          const struct minidl_window *s);

int minidl_bf16_native(void)
{
    return bf16_gemm_native();
}

int minidl_conv2d_forward_bf16(float *out, const float *x, const float *weight, const float *bias,
                               const struct minidl_window *s, float *scratch, size_t scratch_floats)
{
    // out is (P, F), x is (N, H, W, C), weight is (K, F), bias is (F,) or NULL
    if (!native_forward(s)) {
        float *rx = rounded(x, image_floats(s)), *rw = rounded(weight, weight_floats(s));
        int status = rx && rw ? minidl_conv2d_forward(out, rx, rw, bias, s, scratch, scratch_floats)
                              : MINIDL_OUT_OF_MEMORY;
        free(rx);
        free(rw);
        return status;
    }
    return forward_native(out, x, weight, bias, s);
}

/* The forward's product on the tiles (native(s) holds). */
static int forward_native(float *out, const float *x, const float *weight, const float *bias,
                          const struct minidl_window *s)
{
    if (bf16_conv_implicit_ok(s))   // stride 1: no im2col (conv_bf16_implicit.c)
        return bf16_conv_forward_implicit(out, x, weight, bias, s);
    const int64_t pixels = s->n * s->oh * s->ow, k = s->kh * s->kw * s->c;
    struct bf16_source a, b;
    struct bf16_writer w;
    bf16_source_im2col(&a, x, s);
    bf16_source_matrix(&b, weight, s->f, 0);
    bf16_writer_matrix(&w, out, s->f, 1.0f, 0.0f, bias, 0);
    int64_t per;
    const int parts = split(pixels, BF16_MR, &per);
    int status = MINIDL_OK;
#pragma omp parallel for num_threads(parts) schedule(static) reduction(| : status)
    for (int t = 0; t < parts; t++)
        status |= bf16_gemm_run(&w, &a, &b, t * per, min64(pixels, (t + 1) * per), 0, s->f, 0, k);
    return status ? MINIDL_OUT_OF_MEMORY : MINIDL_OK;
}

/* ------------------------------------------------------------------ backward data */
/* At stride 1, dx is the forward convolution of dout (zero-padded by the kernel's extent minus
 * the forward padding) with the kernel rotated by 180 degrees and its C and F axes swapped:
 * dx[n, iy, ix, c] = sum over (ky', kx', f) of dout[n, iy - pad' + ky' * DH, ...] *
 * weight[KH - 1 - ky', KW - 1 - kx', c, f]. No col2im: each dx pixel is written once. */
static int backward_data_as_forward(float *dx, const float *dout, const float *weight,
                                    const struct minidl_window *s)
{
    struct minidl_window r = *s;
    r.h = s->oh;
    r.w = s->ow;
    r.c = s->f;
    r.pad_top = (s->kh - 1) * s->dh - s->pad_top;
    r.pad_left = (s->kw - 1) * s->dw - s->pad_left;
    r.oh = s->h;
    r.ow = s->w;
    r.f = s->c;
    float *rotated = minidl_alloc_floats((size_t)(s->kh * s->kw * s->c * s->f));   // (KH, KW, F, C)
    if (!rotated)
        return MINIDL_OUT_OF_MEMORY;
    for (int64_t ky = 0; ky < s->kh; ky++)
        for (int64_t kx = 0; kx < s->kw; kx++) {
            const float *src = weight + ((s->kh - 1 - ky) * s->kw + (s->kw - 1 - kx)) * s->c * s->f;
            float *dst = rotated + (ky * s->kw + kx) * s->f * s->c;
            for (int64_t c = 0; c < s->c; c++)
                for (int64_t f = 0; f < s->f; f++)
                    dst[f * s->c + c] = src[c * s->f + f];
        }
    int status = forward_native(dx, dout, rotated, NULL, &r);
    free(rotated);
    return status;
}

int minidl_conv2d_backward_data_bf16(float *dx, const float *dout, const float *weight,
                                     const struct minidl_window *s, float *scratch, size_t scratch_floats)
{
    // dx is (N, H, W, C), dout is (P, F), weight is (K, F)
    if (!native(s)) {
        float *rd = rounded(dout, out_floats(s)), *rw = rounded(weight, weight_floats(s));
        int status = rd && rw ? minidl_conv2d_backward_data(dx, rd, rw, s, scratch, scratch_floats)
                              : MINIDL_OUT_OF_MEMORY;
        free(rd);
        free(rw);
        return status;
    }
    if (s->sh == 1 && s->sw == 1)
        return backward_data_as_forward(dx, dout, weight, s);
    const int64_t per_image = s->oh * s->ow, k = s->kh * s->kw * s->c;
    struct bf16_source a, b;
    struct bf16_writer w;
    bf16_source_matrix(&a, dout, s->f, 0);
    bf16_source_matrix(&b, weight, s->f, 1);   // op(b)[f, (ky, kx, c)] = weight[(ky, kx, c), f]
    memset(&w, 0, sizeof w);
    w.write = col2im_write;
    w.c = dx;
    w.window = s;
    // Threads take whole images, so that no two add into the same dx pixel.
    int64_t per;
    const int parts = split(s->n, 1, &per);
    int status = MINIDL_OK;
#pragma omp parallel for num_threads(parts) schedule(static) reduction(| : status)
    for (int t = 0; t < parts; t++) {
        const int64_t n0 = t * per, n1 = min64(s->n, (t + 1) * per);
        if (n1 <= n0)
            continue;
        memset(dx + n0 * s->h * s->w * s->c, 0, (size_t)((n1 - n0) * s->h * s->w * s->c) * sizeof(float));
        status |= bf16_gemm_run(&w, &a, &b, n0 * per_image, n1 * per_image, 0, k, 0, s->f);
    }
    return status ? MINIDL_OUT_OF_MEMORY : MINIDL_OK;
}

/* ------------------------------------------------------------------ backward filter */
int minidl_conv2d_backward_filter_bf16(float *dweight, float *dbias, const float *dout, const float *x,
                                       const struct minidl_window *s, float *scratch, size_t scratch_floats)
{
    // dweight is (K, F), dbias is (F,) or NULL, dout is (P, F), x is (N, H, W, C)
    if (!native(s)) {
        float *rd = rounded(dout, out_floats(s)), *rx = rounded(x, image_floats(s));
        int status = rd && rx ? minidl_conv2d_backward_filter(dweight, NULL, rd, rx, s, scratch, scratch_floats)
                              : MINIDL_OUT_OF_MEMORY;
        free(rd);
        free(rx);
        if (status || !dbias)
            return status;
    } else if (bf16_conv_filter_implicit_ok(s)) {   // stride 1 along rows: no im2col
        int status = bf16_conv_backward_filter_implicit(dweight, dout, x, s);
        if (status)
            return status;
    } else {
        const int64_t pixels = s->n * s->oh * s->ow, k = s->kh * s->kw * s->c;
        int64_t per;
        const int parts = split(pixels, 2 * BF16_KSTEP, &per);
        // thread 0 writes dweight; the others their own partial sums, added at the end
        float *partial = parts > 1 ? minidl_alloc_floats((size_t)((parts - 1) * k * s->f)) : NULL;
        if (parts > 1 && !partial)
            return MINIDL_OUT_OF_MEMORY;
        struct bf16_source a, b;
        bf16_source_matrix(&a, dout, s->f, 1);   // op(a)[f, pixel] = dout[pixel, f]
        bf16_source_im2col(&b, x, s);
        int status = MINIDL_OK;
#pragma omp parallel for num_threads(parts) schedule(static) reduction(| : status)
        for (int t = 0; t < parts; t++) {
            struct bf16_writer w;   // dweight^T's block (f, (ky, kx, c)) lands transposed
            bf16_writer_matrix(&w, t == 0 ? dweight : partial + (t - 1) * k * s->f, s->f, 1.0f, 0.0f, NULL, 1);
            status |= bf16_gemm_run(&w, &a, &b, 0, s->f, 0, k, t * per, min64(pixels, (t + 1) * per));
        }
        for (int t = 1; t < parts && !status; t++) {
            const float *p = partial + (t - 1) * k * s->f;
            for (int64_t i = 0; i < k * s->f; i++)
                dweight[i] += p[i];
        }
        free(partial);
        if (status)
            return MINIDL_OUT_OF_MEMORY;
    }
    if (dbias) {   // float32, from the unrounded dout
        const int64_t pixels = s->n * s->oh * s->ow;
        memset(dbias, 0, (size_t)s->f * sizeof(float));
        for (int64_t r = 0; r < pixels; r++)
            for (int64_t f = 0; f < s->f; f++)
                dbias[f] += dout[r * s->f + f];
    }
    return MINIDL_OK;
}

/* ------------------------------------------------------------------ references */
int minidl_conv2d_forward_bf16_ref(float *out, const float *x, const float *weight, const float *bias,
                                   const struct minidl_window *s)
{
    float *rx = rounded(x, image_floats(s)), *rw = rounded(weight, weight_floats(s));
    if (rx && rw)
        minidl_conv2d_forward_ref(out, rx, rw, bias, s);
    int status = rx && rw ? MINIDL_OK : MINIDL_OUT_OF_MEMORY;
    free(rx);
    free(rw);
    return status;
}

int minidl_conv2d_backward_data_bf16_ref(float *dx, const float *dout, const float *weight,
                                         const struct minidl_window *s)
{
    float *rd = rounded(dout, out_floats(s)), *rw = rounded(weight, weight_floats(s));
    if (rd && rw)
        minidl_conv2d_backward_data_ref(dx, rd, rw, s);
    int status = rd && rw ? MINIDL_OK : MINIDL_OUT_OF_MEMORY;
    free(rd);
    free(rw);
    return status;
}

int minidl_conv2d_backward_filter_bf16_ref(float *dweight, float *dbias, const float *dout, const float *x,
                                           const struct minidl_window *s)
{
    float *rd = rounded(dout, out_floats(s)), *rx = rounded(x, image_floats(s));
    if (rd && rx)
        minidl_conv2d_backward_filter_ref(dweight, NULL, rd, rx, s);
    int status = rd && rx ? MINIDL_OK : MINIDL_OUT_OF_MEMORY;
    free(rd);
    free(rx);
    if (dbias && !status) {
        memset(dbias, 0, (size_t)s->f * sizeof(float));
        for (int64_t r = 0; r < s->n * s->oh * s->ow; r++)
            for (int64_t f = 0; f < s->f; f++)
                dbias[f] += dout[r * s->f + f];
    }
    return status;
}
