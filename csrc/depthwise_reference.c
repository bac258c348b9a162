/* The reference twins of the depthwise kernels: depthwise.h's definition as plain loops,
 * single-threaded, summing in double. Tests compare the fast kernels with these. */

#include <string.h>

#include "depthwise.h"

void minidl_depthwise_conv2d_forward_ref(float *out, const float *x, const float *weight, const float *bias,
                                         const struct minidl_window *s)
{
    const int64_t m = s->f / s->c;
    for (int64_t n = 0; n < s->n; n++)
        for (int64_t oy = 0; oy < s->oh; oy++)
            for (int64_t ox = 0; ox < s->ow; ox++)
                for (int64_t f = 0; f < s->f; f++) {
                    double acc = bias ? bias[f] : 0.0;
                    for (int64_t ky = 0; ky < s->kh; ky++)
                        for (int64_t kx = 0; kx < s->kw; kx++) {
                            int64_t iy = oy * s->sh - s->pad_top + ky, ix = ox * s->sw - s->pad_left + kx;
                            if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                                continue;
                            acc += (double)x[((n * s->h + iy) * s->w + ix) * s->c + f / m] *
                                   weight[(ky * s->kw + kx) * s->f + f];
                        }
                    out[((n * s->oh + oy) * s->ow + ox) * s->f + f] = (float)acc;
                }
}

void minidl_depthwise_conv2d_backward_data_ref(float *dx, const float *dout, const float *weight,
                                               const struct minidl_window *s)
{
    const int64_t m = s->f / s->c;
    memset(dx, 0, sizeof(float) * s->n * s->h * s->w * s->c);
    for (int64_t n = 0; n < s->n; n++)
        for (int64_t oy = 0; oy < s->oh; oy++)
            for (int64_t ox = 0; ox < s->ow; ox++)
                for (int64_t ky = 0; ky < s->kh; ky++)
                    for (int64_t kx = 0; kx < s->kw; kx++) {
                        int64_t iy = oy * s->sh - s->pad_top + ky, ix = ox * s->sw - s->pad_left + kx;
                        if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                            continue;
                        for (int64_t f = 0; f < s->f; f++)
                            dx[((n * s->h + iy) * s->w + ix) * s->c + f / m] +=
                                dout[((n * s->oh + oy) * s->ow + ox) * s->f + f] *
                                weight[(ky * s->kw + kx) * s->f + f];
                    }
}

void minidl_depthwise_conv2d_backward_filter_ref(float *dweight, float *dbias, const float *dout,
                                                 const float *x, const struct minidl_window *s)
{
    const int64_t m = s->f / s->c;
    for (int64_t ky = 0; ky < s->kh; ky++)
        for (int64_t kx = 0; kx < s->kw; kx++)
            for (int64_t f = 0; f < s->f; f++) {
                double acc = 0.0;
                for (int64_t n = 0; n < s->n; n++)
                    for (int64_t oy = 0; oy < s->oh; oy++)
                        for (int64_t ox = 0; ox < s->ow; ox++) {
                            int64_t iy = oy * s->sh - s->pad_top + ky, ix = ox * s->sw - s->pad_left + kx;
                            if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                                continue;
                            acc += (double)x[((n * s->h + iy) * s->w + ix) * s->c + f / m] *
                                   dout[((n * s->oh + oy) * s->ow + ox) * s->f + f];
                        }
                dweight[(ky * s->kw + kx) * s->f + f] = (float)acc;
            }
    if (dbias)
        for (int64_t f = 0; f < s->f; f++) {
            double acc = 0.0;
            for (int64_t p = 0; p < s->n * s->oh * s->ow; p++)
                acc += dout[p * s->f + f];
            dbias[f] = (float)acc;
        }
}
