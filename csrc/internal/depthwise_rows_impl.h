/* The depthwise row kernels (depthwise_rows.h) written once in the vf_* names of
 * simd_avx2.h / simd_avx512.h / simd_scalar.h; each depthwise_rows_<isa>.c includes its simd
 * header, then this file, and returns &isa_rows. Channels go in blocks of VF_LANES, the last
 * block with masked loads and stores (padding lanes read 0 and are never written). */
#ifndef MINIDL_DEPTHWISE_ROWS_IMPL_H
#define MINIDL_DEPTHWISE_ROWS_IMPL_H

#include "depthwise_rows.h"

static inline vf load_n(const float *p, int n) { return n == VF_LANES ? vf_load(p) : vf_load_part(p, n, 0.0f); }

static inline void store_n(float *p, vf v, int n)
{
    if (n == VF_LANES)
        vf_store(p, v);
    else
        vf_store_part(p, v, n);
}

static inline int block_lanes(int64_t f, int64_t cb) { return f - cb < VF_LANES ? (int)(f - cb) : VF_LANES; }

static void forward_row(float *o, const float *const *xrows, const float *weight, const float *bias,
                        const struct minidl_window *win)
{
    const int64_t f = win->f, kw = win->kw;
    for (int64_t ox = 0; ox < win->ow; ox++) {
        const int64_t ix0 = ox * win->sw - win->pad_left;
        const int64_t kx0 = ix0 < 0 ? -ix0 : 0, kx1 = win->w - ix0 < kw ? win->w - ix0 : kw;
        for (int64_t cb = 0; cb < f; cb += VF_LANES) {
            const int n = block_lanes(f, cb);
            vf acc = bias ? load_n(bias + cb, n) : vf_zero();
            for (int64_t ky = 0; ky < win->kh; ky++) {
                const float *xr = xrows[ky]; /* xr is (W, F) */
                if (!xr)
                    continue;
                const float *wr = weight + ky * kw * f + cb;
                for (int64_t kx = kx0; kx < kx1; kx++)
                    acc = vf_fmadd(load_n(xr + (ix0 + kx) * f + cb, n), load_n(wr + kx * f, n), acc);
            }
            store_n(o + ox * f + cb, acc, n);
        }
    }
}

static void backward_data_row(float *dxr, const float *const *drows, const float *weight,
                              const struct minidl_window *win)
{
    const int64_t f = win->f, kw = win->kw, sw = win->sw;
    for (int64_t ix = 0; ix < win->w; ix++) {
        /* tap kx of output ox lands here when ox * sw + kx = ix + pad_left, 0 <= ox < ow */
        const int64_t t = ix + win->pad_left, phase = t % sw;
        int64_t kx_lo = t - (win->ow - 1) * sw;
        kx_lo = kx_lo <= phase ? phase : phase + (kx_lo - phase + sw - 1) / sw * sw;
        const int64_t kx_hi = t < kw - 1 ? t : kw - 1;
        for (int64_t cb = 0; cb < f; cb += VF_LANES) {
            const int n = block_lanes(f, cb);
            vf acc = vf_zero();
            for (int64_t ky = 0; ky < win->kh; ky++) {
                const float *d = drows[ky]; /* d is (OW, F) */
                if (!d)
                    continue;
                const float *wr = weight + ky * kw * f + cb;
                for (int64_t kx = kx_lo; kx <= kx_hi; kx += sw)
                    acc = vf_fmadd(load_n(d + (t - kx) / sw * f + cb, n), load_n(wr + kx * f, n), acc);
            }
            store_n(dxr + ix * f + cb, acc, n);
        }
    }
}

static void backward_filter_row(float *dweight, float *dbias, const float *const *xrows, const float *d,
                                const struct minidl_window *win)
{
    const int64_t f = win->f, kw = win->kw, sw = win->sw;
    for (int64_t ky = 0; ky < win->kh; ky++) {
        const float *xr = xrows[ky]; /* xr is (W, F) */
        if (!xr)
            continue;
        for (int64_t kx = 0; kx < kw; kx++) {
            int64_t ox0, ox1;
            depthwise_columns(win, kx, &ox0, &ox1);
            const float *xs = xr + (kx - win->pad_left) * f; /* input column of ox is ox * sw there */
            float *dw = dweight + (ky * kw + kx) * f;
            for (int64_t cb = 0; cb < f; cb += VF_LANES) {
                const int n = block_lanes(f, cb);
                vf acc = vf_zero();
                for (int64_t ox = ox0; ox < ox1; ox++)
                    acc = vf_fmadd(load_n(xs + ox * sw * f + cb, n), load_n(d + ox * f + cb, n), acc);
                store_n(dw + cb, vf_add(load_n(dw + cb, n), acc), n);
            }
        }
    }
    if (!dbias)
        return;
    for (int64_t cb = 0; cb < f; cb += VF_LANES) {
        const int n = block_lanes(f, cb);
        vf acc = vf_zero();
        for (int64_t ox = 0; ox < win->ow; ox++)
            acc = vf_add(acc, load_n(d + ox * f + cb, n));
        store_n(dbias + cb, vf_add(load_n(dbias + cb, n), acc), n);
    }
}

static const struct depthwise_rows isa_rows = {
    .forward = forward_row,
    .backward_data = backward_data_row,
    .backward_filter = backward_filter_row,
};

#endif
