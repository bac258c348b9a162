/* The reference twins of the depthwise kernels: depthwise.h's definition as plain loops,
 * single-threaded, summing in double. Tests compare the fast kernels with these. */

#include <string.h>

#include "depthwise.h"

/* The input pixel (n, iy, ix) that tap (ky, kx) of output (n, oy, ox) reads, as the offset of
 * its first channel in x; -1 where the tap lies in the padding. */
static int64_t tap_pixel(const struct minidl_window *s, int64_t n, int64_t oy, int64_t ox, int64_t ky,
                         int64_t kx)
{
    int64_t iy = oy * s->sh - s->pad_top + ky, ix = ox * s->sw - s->pad_left + kx;
    if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
        return -1;
    return ((n * s->h + iy) * s->w + ix) * s->c;
}

void minidl_depthwise_conv2d_forward_ref(float *out, const float *x, const float *weight, const float *bias,
                                         const struct minidl_window *s)
{
    const int64_t m = s->f / s->c, outputs = s->n * s->oh * s->ow;
    for (int64_t p = 0; p < outputs; p++) /* p = (n * OH + oy) * OW + ox */
        for (int64_t f = 0; f < s->f; f++) {
            double acc = bias ? bias[f] : 0.0;
            for (int64_t tap = 0; tap < s->kh * s->kw; tap++) {
                int64_t at = tap_pixel(s, p / (s->oh * s->ow), p / s->ow % s->oh, p % s->ow, tap / s->kw,
                                       tap % s->kw);
                if (at >= 0)
                    acc += (double)x[at + f / m] * weight[tap * s->f + f];
            }
            out[p * s->f + f] = (float)acc;
        }
}

void minidl_depthwise_conv2d_backward_data_ref(float *dx, const float *dout, const float *weight,
                                               const struct minidl_window *s)
{
    const int64_t m = s->f / s->c, outputs = s->n * s->oh * s->ow;
    memset(dx, 0, sizeof(float) * s->n * s->h * s->w * s->c);
    for (int64_t p = 0; p < outputs; p++)
        for (int64_t tap = 0; tap < s->kh * s->kw; tap++) {
            int64_t at = tap_pixel(s, p / (s->oh * s->ow), p / s->ow % s->oh, p % s->ow, tap / s->kw,
                                   tap % s->kw);
            for (int64_t f = 0; at >= 0 && f < s->f; f++)
                dx[at + f / m] += dout[p * s->f + f] * weight[tap * s->f + f];
        }
}

void minidl_depthwise_conv2d_backward_filter_ref(float *dweight, float *dbias, const float *dout,
                                                 const float *x, const struct minidl_window *s)
{
    const int64_t m = s->f / s->c, outputs = s->n * s->oh * s->ow;
    for (int64_t tap = 0; tap < s->kh * s->kw; tap++)
        for (int64_t f = 0; f < s->f; f++) {
            double acc = 0.0;
            for (int64_t p = 0; p < outputs; p++) {
                int64_t at = tap_pixel(s, p / (s->oh * s->ow), p / s->ow % s->oh, p % s->ow, tap / s->kw,
                                       tap % s->kw);
                if (at >= 0)
                    acc += (double)x[at + f / m] * dout[p * s->f + f];
            }
            dweight[tap * s->f + f] = (float)acc;
        }
    for (int64_t f = 0; dbias && f < s->f; f++) {
        double acc = 0.0;
        for (int64_t p = 0; p < outputs; p++)
            acc += dout[p * s->f + f];
        dbias[f] = (float)acc;
    }
}
