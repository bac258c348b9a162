/* The mixing augmentation ops (see image_mix.h). The fast versions thread over samples or
 * image rows and turn each op into contiguous runs: a mix is one axpby per sample, a paste
 * copies whole row segments (the box's columns found once per image), a filter accumulates
 * each output row as KH x KW shifted axpys of input rows (a tap's column shift is a shift of
 * the flattened row by a multiple of c, so the channels need no inner loop). The references
 * work pixel by pixel; both add a pixel's taps in the same order (rows, then columns). */
#include <math.h>
#include <string.h>

#include "image_mix.h"
#include "internal/image_loops.h"
#include "internal/parallel.h"

static inline float clampf(float v, float low, float high)
{
    return v < low ? low : (v > high ? high : v);   /* NaN passes through */
}

static inline int64_t source_index(float k, int count)
{
    if (!(k > 0.0f)) return 0;   /* negative or NaN */
    return k >= (float)(count - 1) ? count - 1 : (int64_t)k;
}

/* ------------------------------------------------------------------ batch_mix */
void minidl_batch_mix_forward(float *out, const float *x, const float *mix, int n, int64_t size)
{
    int threaded = (int64_t)n * size >= MINIDL_PARALLEL_MIN && n > 1;
#pragma omp parallel for schedule(static) if (threaded) num_threads(minidl_num_threads())
    for (int s = 0; s < n; s++) {
        const float a = mix[3 * s], b = mix[3 * s + 1];
        const float *self = x + (int64_t)s * size;
        const float *other = x + source_index(mix[3 * s + 2], n) * size;
        float *dst = out + (int64_t)s * size;
#pragma omp simd
        for (int64_t k = 0; k < size; k++) dst[k] = a * self[k] + b * other[k];
    }
}

void minidl_batch_mix_reference(float *out, const float *x, const float *mix, int n, int64_t size)
{
    for (int s = 0; s < n; s++)
        for (int64_t k = 0; k < size; k++)
            out[s * size + k] = mix[3 * s] * x[s * size + k] +
                                mix[3 * s + 1] * x[source_index(mix[3 * s + 2], n) * size + k];
}

/* ---------------------------------------------------------------- image_paste */
/* The first integer t in [0, length] with (float)t >= bound: where a box edge falls. */
static int first_at_or_above(float bound, int length)
{
    if (!(bound > 0.0f)) return 0;   /* also NaN: compared false, see the caller */
    return bound >= (float)length ? length : (int)ceilf(bound);
}

/* A table's integer offset (NaN: 0), bounded so that adding a coordinate cannot overflow. */
static inline int64_t offset_of(float v)
{
    if (!(v == v)) return 0;
    v = floorf(v);
    return v < -1073741824.0f ? -1073741824 : (v > 1073741824.0f ? 1073741824 : (int64_t)v);
}

static inline int64_t clamp_index(int64_t t, int length)
{
    return t < 0 ? 0 : (t >= length ? length - 1 : t);
}

void minidl_image_paste_forward(float *out, const float *x, const float *boxes, const float *source,
                                float low, float high, int n, int h, int w, int c, int m, int sh,
                                int sw)
{
    const int64_t row = (int64_t)w * c, image = (int64_t)h * row;
    const int64_t source_row = (int64_t)sw * c, source_image = (int64_t)sh * source_row;
    int threaded = (int64_t)n * image >= MINIDL_PARALLEL_MIN && n > 1;
#pragma omp parallel for schedule(static) if (threaded) num_threads(minidl_num_threads())
    for (int s = 0; s < n; s++) {
        const float *b = boxes + 7 * s;
        int empty = isnan(b[0]) || isnan(b[1]) || isnan(b[2]) || isnan(b[3]);
        const int j0 = empty ? 0 : first_at_or_above(b[0], w), j1 = empty ? 0 : first_at_or_above(b[1], w);
        const int i0 = empty ? 0 : first_at_or_above(b[2], h), i1 = empty ? 0 : first_at_or_above(b[3], h);
        const int64_t dx = offset_of(b[5]), dy = offset_of(b[6]);
        const float *src = source + source_index(b[4], m) * source_image;
        memcpy(out + s * image, x + s * image, (size_t)image * sizeof(float));
        for (int i = i0; i < i1 && j0 < j1; i++) {
            float *dst = out + s * image + i * row;
            const float *from = src + clamp_index(i + dy, sh) * source_row;
            const int64_t first = j0 + dx, last = j1 - 1 + dx;
            if (first >= 0 && last < sw) {   /* the usual case: one contiguous run */
                const float *run = from + first * c;
#pragma omp simd
                for (int64_t k = 0; k < (int64_t)(j1 - j0) * c; k++)
                    dst[(int64_t)j0 * c + k] = clampf(run[k], low, high);
                continue;
            }
            for (int j = j0; j < j1; j++)
                for (int ch = 0; ch < c; ch++)
                    dst[(int64_t)j * c + ch] = clampf(from[clamp_index(j + dx, sw) * c + ch], low, high);
        }
    }
}

void minidl_image_paste_reference(float *out, const float *x, const float *boxes,
                                  const float *source, float low, float high, int n, int h, int w,
                                  int c, int m, int sh, int sw)
{
    for (int s = 0; s < n; s++) {
        const float *b = boxes + 7 * s;
        const int64_t k = source_index(b[4], m);
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) {
                int inside = (float)j >= b[0] && (float)j < b[1] && (float)i >= b[2] && (float)i < b[3];
                int64_t r = clamp_index(i + offset_of(b[6]), sh), col = clamp_index(j + offset_of(b[5]), sw);
                for (int ch = 0; ch < c; ch++) {
                    int64_t at = (((int64_t)s * h + i) * w + j) * c + ch;
                    int64_t from = ((k * sh + r) * sw + col) * c + ch;
                    out[at] = inside ? clampf(source[from], low, high) : x[at];
                }
            }
    }
}

/* ---------------------------------------------------------- image_filter_blend */
void minidl_image_filter_blend_forward(float *out, const float *x, const float *kernel,
                                       const float *weights, float low, float high, int n, int h,
                                       int w, int c, int kh, int kw)
{
    const int64_t row = (int64_t)w * c, image = (int64_t)h * row;
    /* each row's filter and blend in the active ISA's vector loops (internal/image_loops.h) */
    const struct image_loops *loops = minidl_image_loops();
    int threaded = (int64_t)n * image >= MINIDL_PARALLEL_MIN;
#pragma omp parallel for collapse(2) schedule(static) if (threaded) num_threads(minidl_num_threads())
    for (int s = 0; s < n; s++)
        for (int i = 0; i < h; i++) {
            const float wt = weights[s];
            const float *xs = x + s * image, *xrow = xs + i * row;
            float *dst = out + s * image + i * row;
            if (wt == 0.0f) {
#pragma omp simd
                for (int64_t q = 0; q < row; q++) dst[q] = clampf(xrow[q], low, high);
                continue;
            }
            loops->filter_blend_row(dst, xs, kernel, wt, low, high, i, h, w, c, kh, kw);
        }
}

void minidl_image_filter_blend_reference(float *out, const float *x, const float *kernel,
                                         const float *weights, float low, float high, int n,
                                         int h, int w, int c, int kh, int kw)
{
    for (int s = 0; s < n; s++)
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++)
                for (int ch = 0; ch < c; ch++) {
                    int64_t at = (((int64_t)s * h + i) * w + j) * c + ch;
                    if (weights[s] == 0.0f) {
                        out[at] = clampf(x[at], low, high);
                        continue;
                    }
                    float f = 0.0f;
                    for (int a = 0; a < kh; a++)
                        for (int b = 0; b < kw; b++) {
                            int r = i + a - kh / 2, col = j + b - kw / 2;
                            if (r >= 0 && r < h && col >= 0 && col < w)
                                f += kernel[a * kw + b] * x[(((int64_t)s * h + r) * w + col) * c + ch];
                        }
                    out[at] = clampf(x[at] + weights[s] * (f - x[at]), low, high);
                }
}
