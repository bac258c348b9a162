/* Pooling and padding: loops over windows here, the channel loop (contiguous in NHWC) in the
 * vector kernels; OpenMP over output rows in forward and over samples in backward, where
 * overlapping windows of one sample add into the same dx. */
#include <math.h>
#include <string.h>

#include "internal/parallel.h"
#include "internal/vector_kernels.h"
#include "pool.h"

/* The window rows [ky0, ky1) and columns [kx0, kx1) of output (oy, ox) that fall inside the input. */
struct window_span {
    int64_t iy0, ix0;          /* input position of window offset (0, 0), possibly negative */
    int64_t ky0, ky1, kx0, kx1;
};

static struct window_span window_span(const struct minidl_window *win, int64_t oy, int64_t ox)
{
    struct window_span s;
    s.iy0 = oy * win->sh - win->pad_top;
    s.ix0 = ox * win->sw - win->pad_left;
    s.ky0 = s.iy0 < 0 ? -s.iy0 : 0;
    s.kx0 = s.ix0 < 0 ? -s.ix0 : 0;
    s.ky1 = win->h - s.iy0 < win->kh ? win->h - s.iy0 : win->kh;
    s.kx1 = win->w - s.ix0 < win->kw ? win->w - s.ix0 : win->kw;
    return s;
}

static int parallel_worth(const struct minidl_window *win)
{
    return win->n * win->oh * win->ow * win->c * win->kh * win->kw >= MINIDL_PARALLEL_MIN;
}

/* One output pixel of max (argmax not NULL) or average pooling: o (c) from sample xb (h, w, c). */
static void pool_window_forward(float *o, int32_t *am, const float *xb, const struct minidl_window *win,
                                const struct window_span *s, const struct vector_kernels *vk)
{
    const int64_t w = win->w, c = win->c;
    if (am) {
        int32_t first = (int32_t)(s->ky0 * win->kw + s->kx0);
        for (int64_t ch = 0; ch < c; ch++) {
            o[ch] = -INFINITY;
            am[ch] = first;
        }
    } else {
        memset(o, 0, (size_t)c * sizeof(float));
    }
    for (int64_t ky = s->ky0; ky < s->ky1; ky++)
        for (int64_t kx = s->kx0; kx < s->kx1; kx++) {
            const float *xp = xb + ((s->iy0 + ky) * w + s->ix0 + kx) * c; /* xp is (c) */
            if (am)
                vk->max_update(o, am, xp, (int32_t)(ky * win->kw + kx), c);
            else
                vk->add(o, o, xp, c);
        }
    if (!am) {
        int64_t count = (s->ky1 - s->ky0) * (s->kx1 - s->kx0);
        vk->scale(o, count > 0 ? 1.0f / (float)count : 0.0f, c);
    }
}

static void pool2d_forward(float *out, int32_t *argmax, const float *x, const struct minidl_window *win)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    const int64_t h = win->h, w = win->w, c = win->c, oh = win->oh, ow = win->ow;
#pragma omp parallel for collapse(2) schedule(static) if (parallel_worth(win)) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < win->n; b++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                struct window_span s = window_span(win, oy, ox);
                int64_t at = ((b * oh + oy) * ow + ox) * c;
                pool_window_forward(out + at, argmax ? argmax + at : NULL, x + b * h * w * c, win, &s, vk);
            }
}

/* One output pixel's gradient d (c) into sample dxb (h, w, c): through argmax (not NULL) or
 * spread evenly over the window. */
static void pool_window_backward(float *dxb, const float *d, const int32_t *am,
                                 const struct minidl_window *win, int64_t oy, int64_t ox,
                                 const struct vector_kernels *vk)
{
    const int64_t h = win->h, w = win->w, c = win->c, window_size = win->kh * win->kw;
    if (am) {
        int64_t iy0 = oy * win->sh - win->pad_top, ix0 = ox * win->sw - win->pad_left;
        for (int64_t ch = 0; ch < c; ch++) {
            /* argmax comes from the caller: an index outside the window or on the
             * padding routes nothing (as in numpy), and is never written through */
            int32_t a = am[ch];
            int64_t iy = iy0 + a / win->kw, ix = ix0 + a % win->kw;
            if (a >= 0 && a < window_size && iy >= 0 && iy < h && ix >= 0 && ix < w)
                dxb[(iy * w + ix) * c + ch] += d[ch];
        }
        return;
    }
    struct window_span s = window_span(win, oy, ox);
    int64_t count = (s.ky1 - s.ky0) * (s.kx1 - s.kx0);
    float inv = count > 0 ? 1.0f / (float)count : 0.0f;
    for (int64_t ky = s.ky0; ky < s.ky1; ky++)
        for (int64_t kx = s.kx0; kx < s.kx1; kx++) {
            float *dp = dxb + ((s.iy0 + ky) * w + s.ix0 + kx) * c;
            vk->axpby(dp, 1.0f, dp, inv, d, c);
        }
}

static void pool2d_backward(float *dx, const float *dout, const int32_t *argmax,
                            const struct minidl_window *win)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    const int64_t h = win->h, w = win->w, c = win->c, oh = win->oh, ow = win->ow;
#pragma omp parallel for schedule(static) if (parallel_worth(win)) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < win->n; b++) {
        float *dxb = dx + b * h * w * c; /* dxb is (h, w, c) */
        memset(dxb, 0, (size_t)(h * w * c) * sizeof(float));
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                int64_t at = ((b * oh + oy) * ow + ox) * c;
                pool_window_backward(dxb, dout + at, argmax ? argmax + at : NULL, win, oy, ox, vk);
            }
    }
}

void minidl_max_pool2d_forward(float *out, int32_t *argmax, const float *x, const struct minidl_window *win)
{
    pool2d_forward(out, argmax, x, win);
}

void minidl_max_pool2d_backward(float *dx, const float *dout, const int32_t *argmax,
                                const struct minidl_window *win)
{
    pool2d_backward(dx, dout, argmax, win);
}

void minidl_avg_pool2d_forward(float *out, const float *x, const struct minidl_window *win)
{
    pool2d_forward(out, NULL, x, win);
}

void minidl_avg_pool2d_backward(float *dx, const float *dout, const struct minidl_window *win)
{
    pool2d_backward(dx, dout, NULL, win);
}

void minidl_global_avg_pool_forward(float *out, const float *x, int64_t n, int64_t hw, int64_t c)
{
    const struct vector_kernels *vk = minidl_active_kernels();
#pragma omp parallel for schedule(static) if (n * hw * c >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < n; b++) {
        float *o = out + b * c;
        memset(o, 0, (size_t)c * sizeof(float));
        vk->col_sum(o, x + b * hw * c, hw, c);
        vk->scale(o, hw > 0 ? 1.0f / (float)hw : 0.0f, c);
    }
}

void minidl_global_avg_pool_backward(float *dx, const float *dout, int64_t n, int64_t hw, int64_t c)
{
    float inv = hw > 0 ? 1.0f / (float)hw : 0.0f;
#pragma omp parallel for schedule(static) if (n * hw * c >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < n; b++)
        for (int64_t p = 0; p < hw; p++)
            for (int64_t ch = 0; ch < c; ch++) dx[(b * hw + p) * c + ch] = dout[b * c + ch] * inv;
}

void minidl_pad2d_forward(float *out, const float *x, int64_t n, int64_t h, int64_t w, int64_t c,
                          int64_t top, int64_t bottom, int64_t left, int64_t right)
{
    const int64_t oh = h + top + bottom, ow = w + left + right;
#pragma omp parallel for collapse(2) schedule(static) if (n * oh * ow * c >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < n; b++)
        for (int64_t y = 0; y < oh; y++) {
            float *o = out + (b * oh + y) * ow * c; /* o is (ow, c) */
            int64_t iy = y - top;
            if (iy < 0 || iy >= h) {
                memset(o, 0, (size_t)(ow * c) * sizeof(float));
                continue;
            }
            memset(o, 0, (size_t)(left * c) * sizeof(float));
            memcpy(o + left * c, x + (b * h + iy) * w * c, (size_t)(w * c) * sizeof(float));
            memset(o + (left + w) * c, 0, (size_t)(right * c) * sizeof(float));
        }
}

void minidl_pad2d_backward(float *dx, const float *dout, int64_t n, int64_t h, int64_t w, int64_t c,
                           int64_t top, int64_t bottom, int64_t left, int64_t right)
{
    const int64_t oh = h + top + bottom, ow = w + left + right;
#pragma omp parallel for collapse(2) schedule(static) if (n * h * w * c >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < n; b++)
        for (int64_t y = 0; y < h; y++)
            memcpy(dx + (b * h + y) * w * c, dout + ((b * oh + y + top) * ow + left) * c,
                   (size_t)(w * c) * sizeof(float));
}
