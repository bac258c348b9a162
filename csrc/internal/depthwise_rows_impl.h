/* The depthwise row kernels (depthwise_rows.h) written once in the vf_* names of
 * simd_avx2.h / simd_avx512.h / simd_scalar.h; each depthwise_rows_<isa>.c includes its simd
 * header, then this file, and returns &isa_rows.
 *
 * Channels go in blocks of VF_LANES, the last block with masked loads and stores (its unused
 * lanes read 0 and are never written). Each tap adds into its own accumulator chain, so one
 * output would wait on FMA latency at every tap: the kernels keep four chains in flight,
 * four output columns (forward), four input columns (backward-data; input columns ix and
 * ix + SW see the same taps, one output further on) or four quarters of a column sum
 * (backward-filter). Columns whose window reaches into the padding take the one-column path. */
#ifndef MINIDL_DEPTHWISE_ROWS_IMPL_H
#define MINIDL_DEPTHWISE_ROWS_IMPL_H

#include "depthwise_rows.h"

/* the callers pass n == VF_LANES as a literal for whole blocks: once inlined, no test remains */
#define ROW_INLINE static inline __attribute__((always_inline))

ROW_INLINE vf load_n(const float *p, int n) { return n == VF_LANES ? vf_load(p) : vf_load_part(p, n, 0.0f); }

ROW_INLINE void store_n(float *p, vf v, int n)
{
    if (n == VF_LANES)
        vf_store(p, v);
    else
        vf_store_part(p, v, n);
}

/* ---------------------------------------------------------------- forward */

/* o[ox] for channels [cb, cb + n), taps clipped to the input. */
ROW_INLINE void forward_one(float *o, const float *const *xrows, const float *weight, const float *bias,
                            const struct minidl_window *win, int64_t ox, int64_t cb, int n)
{
    const int64_t f = win->f, kw = win->kw, ix0 = ox * win->sw - win->pad_left;
    const int64_t kx0 = ix0 < 0 ? -ix0 : 0, kx1 = win->w - ix0 < kw ? win->w - ix0 : kw;
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

/* o[ox .. ox + 3] for channels [cb, cb + n): four columns whose windows lie inside the input row. */
ROW_INLINE void forward_four(float *o, const float *const *xrows, const float *weight, const float *bias,
                             const struct minidl_window *win, int64_t ox, int64_t cb, int n)
{
    const int64_t f = win->f, kw = win->kw, step = win->sw * f;
    const vf start = bias ? load_n(bias + cb, n) : vf_zero();
    vf a0 = start, a1 = start, a2 = start, a3 = start;
    for (int64_t ky = 0; ky < win->kh; ky++) {
        if (!xrows[ky])
            continue;
        const float *xp = xrows[ky] + (ox * win->sw - win->pad_left) * f + cb;
        const float *wr = weight + ky * kw * f + cb;
        for (int64_t kx = 0; kx < kw; kx++) {
            const vf wv = load_n(wr + kx * f, n);
            const float *p = xp + kx * f;
            a0 = vf_fmadd(load_n(p, n), wv, a0);
            a1 = vf_fmadd(load_n(p + step, n), wv, a1);
            a2 = vf_fmadd(load_n(p + 2 * step, n), wv, a2);
            a3 = vf_fmadd(load_n(p + 3 * step, n), wv, a3);
        }
    }
    store_n(o + ox * f + cb, a0, n);
    store_n(o + (ox + 1) * f + cb, a1, n);
    store_n(o + (ox + 2) * f + cb, a2, n);
    store_n(o + (ox + 3) * f + cb, a3, n);
}

static void forward_row(float *o, const float *const *xrows, const float *weight, const float *bias,
                        const struct minidl_window *win)
{
    const int64_t f = win->f, whole = f / VF_LANES * VF_LANES;
    const int tail = (int)(f - whole);
    /* the columns [lo, hi) whose whole window lies inside the input row */
    const int64_t lo = (win->pad_left + win->sw - 1) / win->sw;
    const int64_t last = win->w - win->kw + win->pad_left, hi = last < 0 ? 0 : last / win->sw + 1;
    for (int64_t ox = 0; ox < win->ow;) {
        if (ox >= lo && ox + 4 <= hi && ox + 4 <= win->ow) {
            for (int64_t cb = 0; cb < whole; cb += VF_LANES)
                forward_four(o, xrows, weight, bias, win, ox, cb, VF_LANES);
            if (tail)
                forward_four(o, xrows, weight, bias, win, ox, whole, tail);
            ox += 4;
            continue;
        }
        for (int64_t cb = 0; cb < whole; cb += VF_LANES)
            forward_one(o, xrows, weight, bias, win, ox, cb, VF_LANES);
        if (tail)
            forward_one(o, xrows, weight, bias, win, ox, whole, tail);
        ox++;
    }
}

/* ---------------------------------------------------------------- backward-data */

/* Tap kx of output ox lands on input column ix when ox * SW + kx = t = ix + pad_left: the taps
 * kx = phase, phase + SW, ... (phase = t % SW), tap kx from output (t - kx) / SW. */

/* dxr[ix] for channels [cb, cb + n), only the taps whose output exists. */
ROW_INLINE void backward_data_one(float *dxr, const float *const *drows, const float *weight,
                                  const struct minidl_window *win, int64_t ix, int64_t cb, int n)
{
    const int64_t f = win->f, kw = win->kw, sw = win->sw, t = ix + win->pad_left, phase = t % sw;
    int64_t kx_lo = t - (win->ow - 1) * sw; /* taps below this one come from outputs past OW */
    kx_lo = kx_lo <= phase ? phase : phase + (kx_lo - phase + sw - 1) / sw * sw;
    const int64_t kx_hi = t < kw - 1 ? t : kw - 1;
    vf acc = vf_zero();
    for (int64_t ky = 0; ky < win->kh; ky++) {
        if (!drows[ky])
            continue;
        const float *dp = drows[ky] + (t - kx_lo) / sw * f + cb, *wr = weight + ky * kw * f + cb;
        for (int64_t kx = kx_lo; kx <= kx_hi; kx += sw, dp -= f)
            acc = vf_fmadd(load_n(dp, n), load_n(wr + kx * f, n), acc);
    }
    store_n(dxr + ix * f + cb, acc, n);
}

/* dxr[ix + j * SW], j = 0 .. 3, for channels [cb, cb + n): columns every tap of whose phase
 * comes from an output that exists. */
ROW_INLINE void backward_data_four(float *dxr, const float *const *drows, const float *weight,
                                   const struct minidl_window *win, int64_t ix, int64_t cb, int n)
{
    const int64_t f = win->f, kw = win->kw, sw = win->sw, t = ix + win->pad_left, phase = t % sw;
    vf a0 = vf_zero(), a1 = vf_zero(), a2 = vf_zero(), a3 = vf_zero();
    for (int64_t ky = 0; ky < win->kh; ky++) {
        if (!drows[ky])
            continue;
        const float *dp = drows[ky] + (t - phase) / sw * f + cb, *wr = weight + ky * kw * f + cb;
        for (int64_t kx = phase; kx < kw; kx += sw, dp -= f) {
            const vf wv = load_n(wr + kx * f, n);
            a0 = vf_fmadd(load_n(dp, n), wv, a0);
            a1 = vf_fmadd(load_n(dp + f, n), wv, a1);
            a2 = vf_fmadd(load_n(dp + 2 * f, n), wv, a2);
            a3 = vf_fmadd(load_n(dp + 3 * f, n), wv, a3);
        }
    }
    store_n(dxr + ix * f + cb, a0, n);
    store_n(dxr + (ix + sw) * f + cb, a1, n);
    store_n(dxr + (ix + 2 * sw) * f + cb, a2, n);
    store_n(dxr + (ix + 3 * sw) * f + cb, a3, n);
}

/* Every tap of column ix's phase comes from an existing output: t >= KW - 1 (no output before
 * the first) and the first tap's output (t - phase) / SW < OW. */
static int all_taps_exist(const struct minidl_window *win, int64_t ix)
{
    const int64_t t = ix + win->pad_left;
    return ix < win->w && t >= win->kw - 1 && t - t % win->sw <= (win->ow - 1) * win->sw;
}

static void backward_data_row(float *dxr, const float *const *drows, const float *weight,
                              const struct minidl_window *win)
{
    const int64_t f = win->f, sw = win->sw, whole = f / VF_LANES * VF_LANES;
    const int tail = (int)(f - whole);
    for (int64_t first = 0; first < sw && first < win->w; first++)
        for (int64_t ix = first; ix < win->w;) {
            if (all_taps_exist(win, ix) && all_taps_exist(win, ix + 3 * sw)) {
                for (int64_t cb = 0; cb < whole; cb += VF_LANES)
                    backward_data_four(dxr, drows, weight, win, ix, cb, VF_LANES);
                if (tail)
                    backward_data_four(dxr, drows, weight, win, ix, whole, tail);
                ix += 4 * sw;
                continue;
            }
            for (int64_t cb = 0; cb < whole; cb += VF_LANES)
                backward_data_one(dxr, drows, weight, win, ix, cb, VF_LANES);
            if (tail)
                backward_data_one(dxr, drows, weight, win, ix, whole, tail);
            ix += sw;
        }
}

/* ---------------------------------------------------------------- backward-filter */

/* dweight[ky, kx] += sum over ox of xrows[ky][ix] * d[ox] for channels [cb, cb + n), the sum
 * over the columns in four interleaved parts. */
ROW_INLINE void backward_filter_block(float *dweight, const float *const *xrows, const float *d,
                                      const struct minidl_window *win, int64_t cb, int n)
{
    const int64_t f = win->f, kw = win->kw, step = win->sw * f;
    for (int64_t ky = 0; ky < win->kh; ky++) {
        if (!xrows[ky])
            continue;
        for (int64_t kx = 0; kx < kw; kx++) {
            int64_t ox0, ox1;
            depthwise_columns(win, kx, &ox0, &ox1);
            if (ox0 >= ox1)
                continue;
            const float *xp = xrows[ky] + (ox0 * win->sw + kx - win->pad_left) * f + cb; /* column ox0 */
            const float *dp = d + ox0 * f + cb;
            vf a0 = vf_zero(), a1 = vf_zero(), a2 = vf_zero(), a3 = vf_zero();
            int64_t ox = ox0;
            for (; ox + 4 <= ox1; ox += 4, xp += 4 * step, dp += 4 * f) {
                a0 = vf_fmadd(load_n(xp, n), load_n(dp, n), a0);
                a1 = vf_fmadd(load_n(xp + step, n), load_n(dp + f, n), a1);
                a2 = vf_fmadd(load_n(xp + 2 * step, n), load_n(dp + 2 * f, n), a2);
                a3 = vf_fmadd(load_n(xp + 3 * step, n), load_n(dp + 3 * f, n), a3);
            }
            for (; ox < ox1; ox++, xp += step, dp += f)
                a0 = vf_fmadd(load_n(xp, n), load_n(dp, n), a0);
            float *dw = dweight + (ky * kw + kx) * f + cb;
            store_n(dw, vf_add(load_n(dw, n), vf_add(vf_add(a0, a1), vf_add(a2, a3))), n);
        }
    }
}

ROW_INLINE void bias_block(float *dbias, const float *d, const struct minidl_window *win, int64_t cb, int n)
{
    vf acc = vf_zero();
    for (int64_t ox = 0; ox < win->ow; ox++)
        acc = vf_add(acc, load_n(d + ox * win->f + cb, n));
    store_n(dbias + cb, vf_add(load_n(dbias + cb, n), acc), n);
}

static void backward_filter_row(float *dweight, float *dbias, const float *const *xrows, const float *d,
                                const struct minidl_window *win)
{
    const int64_t f = win->f, whole = f / VF_LANES * VF_LANES;
    const int tail = (int)(f - whole);
    for (int64_t cb = 0; cb < whole; cb += VF_LANES)
        backward_filter_block(dweight, xrows, d, win, cb, VF_LANES);
    if (tail)
        backward_filter_block(dweight, xrows, d, win, whole, tail);
    if (!dbias)
        return;
    for (int64_t cb = 0; cb < whole; cb += VF_LANES)
        bias_block(dbias, d, win, cb, VF_LANES);
    if (tail)
        bias_block(dbias, d, win, whole, tail);
}

static const struct depthwise_rows isa_rows = {
    .forward = forward_row,
    .backward_data = backward_data_row,
    .backward_filter = backward_filter_row,
};

#undef ROW_INLINE

#endif
