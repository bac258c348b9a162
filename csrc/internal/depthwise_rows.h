/* The row kernels of the depthwise convolution, one table per instruction set.
 *
 * depthwise.c splits each op into rows (an output row for forward and backward-filter, an
 * input row for backward-data), hands rows to OpenMP threads and calls these kernels, which
 * vectorize over the F = C * M channels (contiguous in NHWC and in the (KH, KW, F) weight) and
 * loop over the KH * KW taps. Every channel-indexed row they see has F channels: with a depth
 * multiplier M > 1, depthwise.c first expands each input row to F channels (channel c copied
 * to c * M .. c * M + M - 1) and reduces backward-data's F-channel row back to C.
 *
 * rows[ky] points to the row (of F channels) that tap row ky reads, or is NULL where that
 * row lies in the padding. Shapes: an input row is (W, F), an output row (OW, F). */
#ifndef MINIDL_DEPTHWISE_ROWS_H
#define MINIDL_DEPTHWISE_ROWS_H

#include <stdint.h>

#include "../window.h"

struct depthwise_rows {
    /* o (OW, F) = bias (F, or NULL: 0) + sum over the taps of xrows[ky][ix] * weight[ky, kx] */
    void (*forward)(float *o, const float *const *xrows, const float *weight, const float *bias,
                    const struct minidl_window *win);
    /* dxr (W, F) = sum over the taps of drows[ky][ox] * weight[ky, kx], ox the output whose
     * tap kx lands on each input column (drows[ky]: the output row whose tap ky is this row) */
    void (*backward_data)(float *dxr, const float *const *drows, const float *weight,
                          const struct minidl_window *win);
    /* dweight (KH, KW, F) += sum over ox of xrows[ky][ix] * d[ox]; dbias (F, or NULL) += sum of d */
    void (*backward_filter)(float *dweight, float *dbias, const float *const *xrows, const float *d,
                            const struct minidl_window *win);
};

const struct depthwise_rows *minidl_depthwise_rows_generic(void);
const struct depthwise_rows *minidl_depthwise_rows_avx2(void);
const struct depthwise_rows *minidl_depthwise_rows_avx512(void);

/* The span of output columns [ox0, ox1) whose tap kx reads a real input column. */
static inline void depthwise_columns(const struct minidl_window *win, int64_t kx, int64_t *ox0, int64_t *ox1)
{
    int64_t lo = win->pad_left - kx;                       /* ox * sw >= pad_left - kx */
    int64_t hi = win->w - 1 + win->pad_left - kx;          /* ox * sw <= w - 1 + pad_left - kx */
    *ox0 = lo <= 0 ? 0 : (lo + win->sw - 1) / win->sw;
    *ox1 = hi < 0 ? 0 : hi / win->sw + 1;
    if (*ox1 > win->ow)
        *ox1 = win->ow;
    if (*ox0 > *ox1)
        *ox0 = *ox1;
}

#endif
