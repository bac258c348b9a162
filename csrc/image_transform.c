/* Sampling images under per-image transforms, as Keras's affine_transform: each output pixel
 * maps to an input point, whose nearest pixel or four bilinear taps are read; a tap outside
 * the image is mapped back inside by the fill mode (or reads the constant).
 *
 * The forward runs over output rows, split among the threads, each row by the active ISA's
 * row kernel (internal/image_transform_rows.h: bitwise the scalar rows here, which the generic
 * build runs and which stay their reference); the backward scatters into dx
 * and so splits by image (images never share a dx). Channels are the innermost, contiguous
 * loop of both. Arithmetic is float32 in the order of the numpy reference
 * (minidl/backends/numpy_ops/images.py). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"
#include "image_transform.h"
#include "internal/checked_alloc.h"
#include "internal/image_transform_rows.h"
#include "internal/parallel.h"
#include "status.h"

enum { FILL_CONSTANT, FILL_NEAREST, FILL_WRAP, FILL_REFLECT };

/* Tap index i along an axis of `size` pixels mapped by the fill mode; -1 reads the constant. */
static inline int64_t fix_index(int64_t i, int64_t size, int fill_mode)
{
    if (i >= 0 && i < size)
        return i;
    switch (fill_mode) {
    case FILL_NEAREST:
        return i < 0 ? 0 : size - 1;
    case FILL_WRAP: {
        if (i >= -size && i < 2 * size)   /* one period out (the common case): no division */
            return i < 0 ? i + size : i - size;
        int64_t m = i % size;
        return m < 0 ? m + size : m;
    }
    case FILL_REFLECT: {   /* d c b a | a b c d | d c b a: period 2 * size */
        if (i >= -size && i < 2 * size)   /* the mirror next to the image: no division */
            return i < 0 ? -1 - i : 2 * size - 1 - i;
        int64_t m = i % (2 * size);
        if (m < 0)
            m += 2 * size;
        return m >= size ? 2 * size - 1 - m : m;
    }
    default:
        return -1;
    }
}

/* A float coordinate as a tap index; coordinates far outside any image are capped so that
 * the conversion stays defined (the fill mode maps them as it maps any outside tap). */
static inline int64_t tap(float p)
{
    const float cap = 1e9f;
    return (int64_t)(p < -cap ? -cap : (p > cap ? cap : p));
}

struct taps {
    int count;
    float weight[4];
    int64_t offset[4];   /* pixel offset y * w + x inside the image, -1 for the constant */
};

/* The taps that output pixel (ox, oy) reads under transform t */
static inline void find_taps(struct taps *tp, const float *t, float ox, float oy, int h, int w,
                             int interpolation, int fill_mode)
{
    float k = t[6] * ox + t[7] * oy + 1.0f;
    float px = (t[0] * ox + t[1] * oy + t[2]) / k;
    float py = (t[3] * ox + t[4] * oy + t[5]) / k;
    if (interpolation == 0) {
        int64_t iy = fix_index(tap(floorf(py + 0.5f)), h, fill_mode);
        int64_t ix = fix_index(tap(floorf(px + 0.5f)), w, fill_mode);
        tp->count = 1;
        tp->weight[0] = 1.0f;
        tp->offset[0] = iy < 0 || ix < 0 ? -1 : iy * w + ix;
        return;
    }
    float x0 = floorf(px), y0 = floorf(py);
    float fx = px - x0, fy = py - y0;
    int64_t ys[2] = {fix_index(tap(y0), h, fill_mode), fix_index(tap(y0) + 1, h, fill_mode)};
    int64_t xs[2] = {fix_index(tap(x0), w, fill_mode), fix_index(tap(x0) + 1, w, fill_mode)};
    float wy[2] = {1.0f - fy, fy}, wx[2] = {1.0f - fx, fx};
    tp->count = 4;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            tp->weight[2 * a + b] = wy[a] * wx[b];
            tp->offset[2 * a + b] = ys[a] < 0 || xs[b] < 0 ? -1 : ys[a] * w + xs[b];
        }
}

/* dst (c) = the weighted sum of the four source pixels (c each); inlined with c a constant
 * for the common channel counts so that the loop unrolls. */
static inline void blend4(float *dst, const float *const src[4], const float weight[4], int c)
{
    for (int ch = 0; ch < c; ch++)
        dst[ch] = ((weight[0] * src[0][ch] + weight[1] * src[1][ch]) + weight[2] * src[2][ch])
                  + weight[3] * src[3][ch];
}

/* dst (c,) = output pixel (ox, oy) through find_taps: any transform, tap and fill mode. */
void image_transform_pixel(float *dst, const float *image, const float *t, int ox, int oy,
                           const struct transform_row_plan *plan)
{
    const int c = plan->c;
    const float fill_value = plan->fill_value;
    struct taps tp;
    find_taps(&tp, t, (float)ox, (float)oy, plan->h, plan->w, plan->interpolation, plan->fill_mode);
    if (tp.count == 1) {
        if (tp.offset[0] < 0)
            for (int ch = 0; ch < c; ch++) dst[ch] = fill_value;
        else
            memcpy(dst, image + tp.offset[0] * c, sizeof(float) * c);
        return;
    }
    const float *src[4];
    float weight[4];
    for (int k = 0; k < 4; k++) {
        src[k] = tp.offset[k] < 0 ? NULL : image + tp.offset[k] * c;
        weight[k] = tp.weight[k];
    }
    for (int ch = 0; ch < c; ch++) {
        float v[4];
        for (int k = 0; k < 4; k++) v[k] = src[k] ? src[k][ch] : fill_value;
        dst[ch] = ((weight[0] * v[0] + weight[1] * v[1]) + weight[2] * v[2]) + weight[3] * v[3];
    }
}

/* One output row (ow, c) of one image in scalar code: the generic build's rows and the
 * reference of the ISA kernels (image_transform_rows.h). Under an affine transform, points
 * whose taps all lie inside the image take a direct path (no fill mode to apply); the rest go
 * through image_transform_pixel. */
static void transform_row(float *row, const float *image, const float *t, int oy,
                          const struct transform_row_plan *plan)
{
    const int h = plan->h, w = plan->w, c = plan->c, interpolation = plan->interpolation;
    const int affine = t[6] == 0.0f && t[7] == 0.0f;
    for (int ox = 0; ox < plan->ow; ox++) {
        float *dst = row + (int64_t)ox * c;
        if (affine) {
            float px = t[0] * (float)ox + t[1] * (float)oy + t[2];
            float py = t[3] * (float)ox + t[4] * (float)oy + t[5];
            /* The range tests come first (NaN fails them): on a non-negative value in range,
             * truncation is floorf, without the libm call the generic build makes of floorf. */
            if (interpolation == 0) {
                float qx = px + 0.5f, qy = py + 0.5f;
                if (qx >= 0.0f && qy >= 0.0f && qx < (float)w && qy < (float)h) {
                    const float *src = image + ((int64_t)(int)qy * w + (int)qx) * c;
                    for (int ch = 0; ch < c; ch++) dst[ch] = src[ch];
                    continue;
                }
            } else if (px >= 0.0f && py >= 0.0f && px < (float)(w - 1) && py < (float)(h - 1)) {
                int x0 = (int)px, y0 = (int)py;
                float fx = px - (float)x0, fy = py - (float)y0;
                const float *a = image + ((int64_t)y0 * w + x0) * c;
                const float *const src[4] = {a, a + c, a + (int64_t)w * c, a + (int64_t)w * c + c};
                const float weight[4] = {(1.0f - fy) * (1.0f - fx), (1.0f - fy) * fx,
                                         fy * (1.0f - fx), fy * fx};
                if (c == 3)
                    blend4(dst, src, weight, 3);
                else if (c == 1)
                    blend4(dst, src, weight, 1);
                else
                    blend4(dst, src, weight, c);
                continue;
            }
        }
        image_transform_pixel(dst, image, t, ox, oy, plan);
    }
}

/* The active ISA's row kernel, or the scalar rows. The vector kernels index one image with
 * int32 lanes: larger images take the scalar rows. */
static transform_row_fn active_row_kernel(int64_t image_size)
{
    if (image_size >= INT32_MAX)
        return transform_row;
    switch (minidl_cpu_isa()) {
    case MINIDL_ISA_AVX512: return minidl_transform_row_avx512();
    case MINIDL_ISA_AVX2: return minidl_transform_row_avx2();
    default: return transform_row;
    }
}

/* The sizes both entry points need: fix_index maps any tap into [0, size), empty for size 0. */
static int sizes_valid(int n, int h, int w, int c, int oh, int ow)
{
    return n >= 0 && c >= 0 && h >= 1 && w >= 1 && oh >= 1 && ow >= 1;
}

int minidl_image_transform_forward(float *out, const float *x, const float *transforms,
                                   int interpolation, int fill_mode, float fill_value,
                                   int n, int h, int w, int c, int oh, int ow, int transform_rows)
{
    if (!sizes_valid(n, h, w, c, oh, ow))
        return MINIDL_INVALID_SIZE;
    transform_row_fn row_kernel = active_row_kernel((int64_t)h * w * c);
    /* the vector kernels' element -> (pixel, channel) tables, padded to whole vectors; without
     * memory for them the scalar rows run */
    const int64_t elements = ((int64_t)ow * c + 15) / 16 * 16;
    float *lane_ox = NULL;
    int32_t *lane_ch = NULL;
    if (row_kernel != transform_row) {
        lane_ox = minidl_alloc_floats((size_t)elements);
        lane_ch = minidl_alloc((size_t)elements * sizeof(int32_t));
        if (lane_ox && lane_ch) {
            for (int64_t e = 0; e < elements; e++) {
                int64_t pixel = c > 0 ? e / c : 0;
                lane_ox[e] = pixel < ow ? (float)pixel : 0.0f;
                lane_ch[e] = pixel < ow ? (int32_t)(e - pixel * c) : 0;
            }
        } else {
            row_kernel = transform_row;
        }
    }
    const struct transform_row_plan plan = {lane_ox, lane_ch, h, w, c, ow, interpolation,
                                            fill_mode, fill_value};
    int64_t rows = (int64_t)n * oh;
    int threaded = rows * ow * c >= MINIDL_PARALLEL_MIN;
#pragma omp parallel for schedule(static) if (threaded) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < rows; r++) {
        int64_t b = r / oh;
        row_kernel(out + r * ow * c, x + b * h * w * c,
                   transforms + (transform_rows == 1 ? 0 : b) * 8, (int)(r % oh), &plan);
    }
    free(lane_ox);
    free(lane_ch);
    return MINIDL_OK;
}

int minidl_image_transform_backward(float *dx, const float *dout, const float *transforms,
                                    int interpolation, int fill_mode,
                                    int n, int h, int w, int c, int oh, int ow, int transform_rows)
{
    if (!sizes_valid(n, h, w, c, oh, ow))
        return MINIDL_INVALID_SIZE;
    memset(dx, 0, sizeof(float) * (size_t)n * h * w * c);
    int threaded = (int64_t)n * oh * ow * c >= MINIDL_PARALLEL_MIN && n > 1;
#pragma omp parallel for schedule(static) if (threaded) num_threads(minidl_num_threads())
    for (int b = 0; b < n; b++) {
        const float *t = transforms + (transform_rows == 1 ? 0 : b) * 8;
        float *image = dx + (int64_t)b * h * w * c;      /* image is (h, w, c) */
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                struct taps tp;
                find_taps(&tp, t, (float)ox, (float)oy, h, w, interpolation, fill_mode);
                const float *src = dout + (((int64_t)b * oh + oy) * ow + ox) * c;
                for (int k = 0; k < tp.count; k++) {
                    if (tp.offset[k] < 0)
                        continue;
                    float wk = tp.weight[k];
                    float *dst = image + tp.offset[k] * c;
#pragma omp simd
                    for (int ch = 0; ch < c; ch++) dst[ch] += wk * src[ch];
                }
            }
    }
    return MINIDL_OK;
}
