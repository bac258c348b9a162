/* Displacement-field resampling (see image_displace.h). The fast versions find a pixel's taps
 * once and reuse them for every channel, and thread over images and rows (the forward) or
 * images (the backward, which scatters inside its own image only); the references find the
 * taps again for each element. Both add a pixel's taps in the same order. */
#include <math.h>
#include <string.h>

#include "image_displace.h"
#include "internal/parallel.h"

#define TAP_CAP 1e9f   /* coordinates are capped here before becoming integer tap indices */

static inline float clampf(float v, float low, float high)
{
    return v < low ? low : (v > high ? high : v);   /* NaN passes through */
}

/* Tap index i along an axis of `size` pixels mapped inside by the fill mode; -1: the constant. */
static inline int64_t fix_index(int64_t i, int64_t size, int fill_mode)
{
    if (i >= 0 && i < size) return i;
    if (fill_mode == 0) return -1;
    if (fill_mode == 1) return i < 0 ? 0 : size - 1;
    if (fill_mode == 2) { int64_t m = i % size; return m < 0 ? m + size : m; }
    if (fill_mode == 3) {
        int64_t m = i % (2 * size);
        if (m < 0) m += 2 * size;
        return m >= size ? 2 * size - 1 - m : m;
    }
    if (size == 1) return 0;          /* mirror: a triangle wave of period 2 (size - 1) */
    int64_t m = (i + size - 1) % (2 * (size - 1));
    if (m < 0) m += 2 * (size - 1);
    m -= size - 1;
    return m < 0 ? -m : m;
}

static inline float capped(float p) { return p < -TAP_CAP ? -TAP_CAP : (p > TAP_CAP ? TAP_CAP : p); }

/* Up to four taps (pixel offsets, -1 for the constant) and weights of output pixel (i, j) of
 * an image; returns the count, or -1 for a NaN coordinate. */
static inline int find_taps(float weight[4], int64_t offset[4], const float *d, int i, int j,
                            int h, int w, int interpolation, int fill_mode)
{
    const float py = (float)i + d[0], px = (float)j + d[1];
    if (py != py || px != px) return -1;
    if (interpolation == 0) {
        const int64_t iy = fix_index((int64_t)capped(nearbyintf(py)), h, fill_mode);
        const int64_t ix = fix_index((int64_t)capped(nearbyintf(px)), w, fill_mode);
        weight[0] = 1.0f;
        offset[0] = iy < 0 || ix < 0 ? -1 : iy * w + ix;
        return 1;
    }
    const float y0 = floorf(py), x0 = floorf(px);
    const float fy = py - y0, fx = px - x0;
    const int64_t ty = (int64_t)capped(y0), tx = (int64_t)capped(x0);
    const int64_t ys[2] = {fix_index(ty, h, fill_mode), fix_index(ty + 1, h, fill_mode)};
    const int64_t xs[2] = {fix_index(tx, w, fill_mode), fix_index(tx + 1, w, fill_mode)};
    const float wy[2] = {1.0f - fy, fy}, wx[2] = {1.0f - fx, fx};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            weight[2 * a + b] = wy[a] * wx[b];
            offset[2 * a + b] = ys[a] < 0 || xs[b] < 0 ? -1 : ys[a] * w + xs[b];
        }
    return 4;
}

/* One channel's value from the taps (count >= 0). */
static inline float sample(const float weight[4], const int64_t offset[4], int count,
                           const float *image, int c, int ch, float fill_value)
{
    float sum = 0.0f;
    for (int k = 0; k < count; k++) {
        if (weight[k] == 0.0f) continue;
        const float v = offset[k] < 0 ? fill_value : image[offset[k] * c + ch];
        sum += weight[k] * v;
    }
    return sum;
}

void minidl_image_displace_forward(float *out, const float *x, const float *field,
                                   int interpolation, int fill_mode, float fill_value, float low,
                                   float high, int n, int h, int w, int c)
{
    const int64_t plane = (int64_t)h * w;
    int threaded = (int64_t)n * plane * c >= MINIDL_PARALLEL_MIN;
#pragma omp parallel for collapse(2) schedule(static) if (threaded) num_threads(minidl_num_threads())
    for (int s = 0; s < n; s++)
        for (int i = 0; i < h; i++) {
            const float *image = x + s * plane * c;
            for (int j = 0; j < w; j++) {
                const int64_t pixel = s * plane + (int64_t)i * w + j;
                float *dst = out + pixel * c;
                const float py = (float)i + field[2 * pixel], px = (float)j + field[2 * pixel + 1];
                if (interpolation == 1 && py >= 0.0f && px >= 0.0f && py < (float)(h - 1) &&
                    px < (float)(w - 1)) {
                    /* all four taps inside (most pixels): no fill mode, no rounding calls; the
                     * same weights and order as find_taps (floor = truncation here) */
                    const int y0 = (int)py, x0 = (int)px;
                    const float fy = py - (float)y0, fx = px - (float)x0;
                    const float w00 = (1.0f - fy) * (1.0f - fx), w01 = (1.0f - fy) * fx;
                    const float w10 = fy * (1.0f - fx), w11 = fy * fx;
                    const float *a = image + ((int64_t)y0 * w + x0) * c, *below = a + (int64_t)w * c;
                    if (w00 != 0.0f && w01 != 0.0f && w10 != 0.0f && w11 != 0.0f) {
                        for (int ch = 0; ch < c; ch++)
                            dst[ch] = clampf(((w00 * a[ch] + w01 * a[c + ch]) + w10 * below[ch]) +
                                             w11 * below[c + ch], low, high);
                        continue;
                    }
                }
                float weight[4];
                int64_t offset[4];
                const int count = find_taps(weight, offset, field + 2 * pixel, i, j, h, w,
                                            interpolation, fill_mode);
                for (int ch = 0; ch < c; ch++)
                    dst[ch] = count < 0 ? NAN : clampf(sample(weight, offset, count, image, c, ch,
                                                              fill_value), low, high);
            }
        }
}

void minidl_image_displace_forward_reference(float *out, const float *x, const float *field,
                                             int interpolation, int fill_mode, float fill_value,
                                             float low, float high, int n, int h, int w, int c)
{
    for (int s = 0; s < n; s++)
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++)
                for (int ch = 0; ch < c; ch++) {
                    const int64_t pixel = ((int64_t)s * h + i) * w + j;
                    float weight[4];
                    int64_t offset[4];
                    int count = find_taps(weight, offset, field + 2 * pixel, i, j, h, w,
                                          interpolation, fill_mode);
                    float v = NAN;
                    if (count >= 0) {
                        v = 0.0f;
                        for (int k = 0; k < count; k++)
                            if (weight[k] != 0.0f)
                                v += weight[k] * (offset[k] < 0 ? fill_value
                                                  : x[((int64_t)s * h * w + offset[k]) * c + ch]);
                        v = clampf(v, low, high);
                    }
                    out[pixel * c + ch] = v;
                }
}

void minidl_image_displace_backward(float *dx, const float *dout, const float *field,
                                    int interpolation, int fill_mode, int n, int h, int w, int c)
{
    const int64_t plane = (int64_t)h * w;
    int threaded = (int64_t)n * plane * c >= MINIDL_PARALLEL_MIN && n > 1;
#pragma omp parallel for schedule(static) if (threaded) num_threads(minidl_num_threads())
    for (int s = 0; s < n; s++) {
        float *image = dx + s * plane * c;
        memset(image, 0, (size_t)(plane * c) * sizeof(float));
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) {
                const int64_t pixel = s * plane + (int64_t)i * w + j;
                float weight[4];
                int64_t offset[4];
                const int count = find_taps(weight, offset, field + 2 * pixel, i, j, h, w,
                                            interpolation, fill_mode);
                const float *g = dout + pixel * c;
                for (int k = 0; k < count; k++) {
                    if (offset[k] < 0 || weight[k] == 0.0f) continue;
                    float *dst = image + offset[k] * c;
                    for (int ch = 0; ch < c; ch++) dst[ch] += weight[k] * g[ch];
                }
            }
    }
}

void minidl_image_displace_backward_reference(float *dx, const float *dout, const float *field,
                                              int interpolation, int fill_mode, int n, int h,
                                              int w, int c)
{
    memset(dx, 0, (size_t)n * h * w * c * sizeof(float));
    for (int s = 0; s < n; s++)
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) {
                const int64_t pixel = ((int64_t)s * h + i) * w + j;
                float weight[4];
                int64_t offset[4];
                int count = find_taps(weight, offset, field + 2 * pixel, i, j, h, w,
                                      interpolation, fill_mode);
                for (int k = 0; k < count; k++)
                    for (int ch = 0; ch < c; ch++)
                        if (offset[k] >= 0 && weight[k] != 0.0f)
                            dx[((int64_t)s * h * w + offset[k]) * c + ch] += weight[k] * dout[pixel * c + ch];
            }
}
