/* The reference twins of the fast convolution kernels: conv.h's definition as plain loops,
 * single-threaded, summing in double. Tests compare the fast paths with these. Channel c of
 * group c / CG meets the weight row c % CG and the filters of the same group. */

#include <string.h>

#include "conv.h"

/* Input row (or column) of output o's tap k; the caller drops it when outside the image. */
static int64_t tap_row(int64_t o, int64_t k, int64_t stride, int64_t pad, int64_t dilation)
{
    return o * stride - pad + k * dilation;
}

void minidl_conv2d_forward_ref(float *out, const float *x, const float *weight, const float *bias,
                               const struct minidl_window *s)
{
    for (int64_t n = 0; n < s->n; n++)
        for (int64_t oy = 0; oy < s->oh; oy++)
            for (int64_t ox = 0; ox < s->ow; ox++)
                for (int64_t f = 0; f < s->f; f++) {
                    const int64_t cg = s->c / s->groups, c0 = f / (s->f / s->groups) * cg;
                    double acc = bias ? bias[f] : 0.0;
                    for (int64_t ky = 0; ky < s->kh; ky++)
                        for (int64_t kx = 0; kx < s->kw; kx++) {
                            int64_t iy = tap_row(oy, ky, s->sh, s->pad_top, s->dh);
                            int64_t ix = tap_row(ox, kx, s->sw, s->pad_left, s->dw);
                            if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                                continue;
                            for (int64_t c = 0; c < cg; c++)
                                acc += (double)x[((n * s->h + iy) * s->w + ix) * s->c + c0 + c] *
                                       weight[((ky * s->kw + kx) * cg + c) * s->f + f];
                        }
                    out[((n * s->oh + oy) * s->ow + ox) * s->f + f] = (float)acc;
                }
}

void minidl_conv2d_backward_data_ref(float *dx, const float *dout, const float *weight,
                                     const struct minidl_window *s)
{
    memset(dx, 0, sizeof(float) * s->n * s->h * s->w * s->c);
    for (int64_t n = 0; n < s->n; n++)
        for (int64_t oy = 0; oy < s->oh; oy++)
            for (int64_t ox = 0; ox < s->ow; ox++)
                for (int64_t ky = 0; ky < s->kh; ky++)
                    for (int64_t kx = 0; kx < s->kw; kx++) {
                        int64_t iy = tap_row(oy, ky, s->sh, s->pad_top, s->dh);
                        int64_t ix = tap_row(ox, kx, s->sw, s->pad_left, s->dw);
                        if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                            continue;
                        for (int64_t c = 0; c < s->c; c++) {
                            const int64_t cg = s->c / s->groups, fg = s->f / s->groups, f0 = c / cg * fg;
                            double acc = 0.0;
                            for (int64_t f = f0; f < f0 + fg; f++)
                                acc += (double)dout[((n * s->oh + oy) * s->ow + ox) * s->f + f] *
                                       weight[((ky * s->kw + kx) * cg + c % cg) * s->f + f];
                            dx[((n * s->h + iy) * s->w + ix) * s->c + c] += (float)acc;
                        }
                    }
}

void minidl_conv2d_backward_filter_ref(float *dweight, float *dbias, const float *dout, const float *x,
                                       const struct minidl_window *s)
{
    for (int64_t ky = 0; ky < s->kh; ky++)
        for (int64_t kx = 0; kx < s->kw; kx++)
            for (int64_t c = 0; c < s->c / s->groups; c++)
                for (int64_t f = 0; f < s->f; f++) {
                    const int64_t cg = s->c / s->groups, ci = f / (s->f / s->groups) * cg + c;
                    double acc = 0.0;
                    for (int64_t n = 0; n < s->n; n++)
                        for (int64_t oy = 0; oy < s->oh; oy++)
                            for (int64_t ox = 0; ox < s->ow; ox++) {
                                int64_t iy = tap_row(oy, ky, s->sh, s->pad_top, s->dh);
                                int64_t ix = tap_row(ox, kx, s->sw, s->pad_left, s->dw);
                                if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                                    continue;
                                acc += (double)x[((n * s->h + iy) * s->w + ix) * s->c + ci] *
                                       dout[((n * s->oh + oy) * s->ow + ox) * s->f + f];
                            }
                    dweight[((ky * s->kw + kx) * cg + c) * s->f + f] = (float)acc;
                }
    if (dbias)
        for (int64_t f = 0; f < s->f; f++) {
            double acc = 0.0;
            for (int64_t r = 0; r < s->n * s->oh * s->ow; r++)
                acc += dout[r * s->f + f];
            dbias[f] = (float)acc;
        }
}
