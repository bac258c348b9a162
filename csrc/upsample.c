/* UpSampling2D (upsample.h). Forward: each output pixel blends (at most) four input pixels.
 * Backward is a gather, not a scatter: each input pixel sums the outputs that read it, which
 * lie within rows [(iy - 1) * SH, (iy + 2) * SH) and the same band of columns, so threads own
 * whole rows of dx and never write the same address. */

#include <string.h>

#include "upsample.h"

#include "internal/parallel.h"

/* Output o's two inputs and the second one's weight along an axis of length len (upsample.h). */
static void axis_taps(int64_t o, int64_t s, int64_t len, int bilinear, int64_t *i0, int64_t *i1, float *t)
{
    if (!bilinear) {
        *i0 = *i1 = o / s;
        *t = 0.0f;
        return;
    }
    double src = ((double)o + 0.5) / (double)s - 0.5;
    if (src < 0.0)
        src = 0.0;
    *i0 = (int64_t)src;
    *i1 = *i0 + 1 < len ? *i0 + 1 : len - 1;
    *t = (float)(src - (double)*i0);
}

/* The weight with which output o reads input i along an axis (0 when it does not). */
static float axis_weight(int64_t o, int64_t i, int64_t s, int64_t len, int bilinear)
{
    int64_t i0, i1;
    float t;
    axis_taps(o, s, len, bilinear, &i0, &i1, &t);
    return (i0 == i ? 1.0f - t : 0.0f) + (i1 == i ? t : 0.0f);
}

void minidl_upsample2d_forward(float *out, const float *x, int64_t sh, int64_t sw, int bilinear,
                               int64_t n, int64_t h, int64_t w, int64_t c)
{
    // out is (N, OH, OW, C), x is (N, H, W, C)
    const int64_t oh = h * sh, ow = w * sw;
#pragma omp parallel for collapse(2) schedule(static) if (n * oh * ow * c >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < n; b++)
        for (int64_t oy = 0; oy < oh; oy++) {
            int64_t y0, y1, x0, x1;
            float ty, tx;
            axis_taps(oy, sh, h, bilinear, &y0, &y1, &ty);
            const float *row0 = x + (b * h + y0) * w * c, *row1 = x + (b * h + y1) * w * c;
            float *dst = out + (b * oh + oy) * ow * c;
            for (int64_t ox = 0; ox < ow; ox++, dst += c) {
                axis_taps(ox, sw, w, bilinear, &x0, &x1, &tx);
                const float *restrict a = row0 + x0 * c, *restrict bb = row0 + x1 * c;
                const float *restrict d = row1 + x0 * c, *restrict e = row1 + x1 * c;
                float *restrict o = dst;
                if (!bilinear) {
                    memcpy(o, a, sizeof(float) * c);
                    continue;
                }
                const float wa = (1.0f - ty) * (1.0f - tx), wb = (1.0f - ty) * tx;
                const float wd = ty * (1.0f - tx), we = ty * tx;
                for (int64_t k = 0; k < c; k++)
                    o[k] = wa * a[k] + wb * bb[k] + wd * d[k] + we * e[k];
            }
        }
}

/* The band [*first, *end) of outputs that may read input i along an axis of output length olen. */
static void reader_band(int64_t i, int64_t s, int64_t olen, int64_t *first, int64_t *end)
{
    *first = (i - 1) * s > 0 ? (i - 1) * s : 0;
    *end = (i + 2) * s < olen ? (i + 2) * s : olen;
}

void minidl_upsample2d_backward(float *dx, const float *dout, int64_t sh, int64_t sw, int bilinear,
                                int64_t n, int64_t h, int64_t w, int64_t c)
{
    // dx is (N, H, W, C), dout is (N, OH, OW, C)
    const int64_t oh = h * sh, ow = w * sw;
#pragma omp parallel for collapse(2) schedule(static) if (n * oh * ow * c >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < n; b++)
        for (int64_t iy = 0; iy < h; iy++) {
            float *dst = dx + (b * h + iy) * w * c;
            memset(dst, 0, sizeof(float) * w * c);
            int64_t oy0, oy1;
            reader_band(iy, sh, oh, &oy0, &oy1);
            for (int64_t oy = oy0; oy < oy1; oy++) {
                const float wy = axis_weight(oy, iy, sh, h, bilinear);
                if (wy == 0.0f)
                    continue;
                const float *src_row = dout + (b * oh + oy) * ow * c;
                for (int64_t ix = 0; ix < w; ix++) {
                    int64_t ox0, ox1;
                    reader_band(ix, sw, ow, &ox0, &ox1);
                    float *restrict acc = dst + ix * c;
                    for (int64_t ox = ox0; ox < ox1; ox++) {
                        const float wgt = wy * axis_weight(ox, ix, sw, w, bilinear);
                        if (wgt == 0.0f)
                            continue;
                        const float *restrict src = src_row + ox * c;
                        for (int64_t k = 0; k < c; k++)
                            acc[k] += wgt * src[k];
                    }
                }
            }
        }
}

/* dst = the definition as a sum over every (destination, source) pixel pair: the forward
 * (dst the output, src the input) or, when adjoint, the backward (dst the input, src dout). */
static void reference_pass(float *dst, const float *src, int64_t sh, int64_t sw, int bilinear, int64_t n,
                           int64_t h, int64_t w, int64_t c, int adjoint)
{
    const int64_t oh = h * sh, ow = w * sw;
    const int64_t dh = adjoint ? h : oh, dw = adjoint ? w : ow, srch = adjoint ? oh : h, srcw = adjoint ? ow : w;
    for (int64_t b = 0; b < n; b++)
        for (int64_t y = 0; y < dh; y++)
            for (int64_t x = 0; x < dw; x++)
                for (int64_t k = 0; k < c; k++) {
                    double acc = 0.0;
                    for (int64_t sy = 0; sy < srch; sy++)
                        for (int64_t sx = 0; sx < srcw; sx++) {
                            double wy = adjoint ? axis_weight(sy, y, sh, h, bilinear) : axis_weight(y, sy, sh, h, bilinear);
                            double wx = adjoint ? axis_weight(sx, x, sw, w, bilinear) : axis_weight(x, sx, sw, w, bilinear);
                            acc += wy * wx * src[((b * srch + sy) * srcw + sx) * c + k];
                        }
                    dst[((b * dh + y) * dw + x) * c + k] = (float)acc;
                }
}

void minidl_upsample2d_forward_ref(float *out, const float *x, int64_t sh, int64_t sw, int bilinear,
                                   int64_t n, int64_t h, int64_t w, int64_t c)
{
    reference_pass(out, x, sh, sw, bilinear, n, h, w, c, 0);
}

void minidl_upsample2d_backward_ref(float *dx, const float *dout, int64_t sh, int64_t sw, int bilinear,
                                    int64_t n, int64_t h, int64_t w, int64_t c)
{
    reference_pass(dx, dout, sh, sw, bilinear, n, h, w, c, 1);
}
