/* What the 2-D convolution's files share (csrc/conv*.c):
 *   conv.c            which algorithm each op takes, and the public entry points (conv.h)
 *   conv_scratch.c    the layout of the caller's scratch, and how threads split the work
 *   conv_im2col.c     the im2col algorithm (any stride and padding)
 *   conv_implicit.c   the implicit algorithm (stride 1, no im2col matrix)
 *   conv_reference.c  the plain-loop reference twins
 * Every function takes the layer's geometry as a struct minidl_window (window.h) `s`; the
 * per-image geometry of the implicit kernels is a struct minidl_window too, with n = 1,
 * stride 1 and no padding (the image is padded first). */
#ifndef MINIDL_CONV_PATHS_H
#define MINIDL_CONV_PATHS_H

#include <stddef.h>
#include <stdint.h>

#include "../window.h"

/* ---- geometry */
static inline int64_t conv_total_rows(const struct minidl_window *s) { return s->n * s->oh * s->ow; }
/* Rows K of the weight matrix (K, F): one group's taps, KH * KW * C / groups. */
static inline int64_t conv_patch_size(const struct minidl_window *s) { return s->kh * s->kw * (s->c / s->groups); }
static inline int64_t conv_group_channels(const struct minidl_window *s) { return s->c / s->groups; }
static inline int64_t conv_group_filters(const struct minidl_window *s) { return s->f / s->groups; }
static inline size_t round16(size_t floats) { return (floats + 15) / 16 * 16; } /* keeps 64-byte alignment */

/* 1x1, stride 1, unpadded, one group: x itself is the im2col matrix. */
static inline int conv_is_pointwise(const struct minidl_window *s)
{
    return s->kh == 1 && s->kw == 1 && s->sh == 1 && s->sw == 1 && s->groups == 1 && s->pad_top == 0 &&
           s->pad_left == 0 && s->oh == s->h && s->ow == s->w;
}

/* dst += src; the two never overlap (restrict lets the compiler vectorize). */
static inline void conv_add_floats(float *restrict dst, const float *restrict src, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        dst[i] += src[i];
}

/* Rows of the im2col matrix built at a time (a multiple of every micro-kernel's MR). */
int64_t conv_chunk_rows(const struct minidl_window *s);
/* Per-image geometry of the implicit forward (x padded to (OH + KH - 1, OW + KW - 1, C)) and
 * of the implicit backward-data (dout padded to (H + KH - 1, W + KW - 1, F), into dx). */
struct minidl_window conv_forward_image(const struct minidl_window *s);
struct minidl_window conv_backward_data_image(const struct minidl_window *s);
/* Stride 1, no dilation, one group, padding within the kernel on every side, images big
 * enough for a full tile. */
int conv_implicit_geometry_ok(const struct minidl_window *s);

/* ---- scratch layout (conv_scratch.c): shared packed weights, then per-thread areas */
size_t conv_scratch_floats(const struct minidl_window *s, int threads);
/* Threads the scratch has room for (0: not even one), at most minidl_num_threads(). */
int conv_usable_threads(const struct minidl_window *s, size_t scratch_floats);
float *conv_packed_weight(const struct minidl_window *s, float *scratch);
/* Group g's packed weights (K, F / groups) (or their transpose) in the im2col path. */
float *conv_packed_group_weight(const struct minidl_window *s, float *scratch, int64_t g);
float *conv_flipped_weight(const struct minidl_window *s, float *scratch); /* (KH, KW, F, C) */
float *conv_thread_work(const struct minidl_window *s, float *scratch, int t);
float *conv_thread_partial_dweight(const struct minidl_window *s, float *scratch, int t);
float *conv_thread_partial_dbias(const struct minidl_window *s, float *scratch, int t);
/* The implicit backward-filter's work area: padded x, dout in pitch layout, then it packed. */
size_t conv_padded_x_floats(const struct minidl_window *s);
size_t conv_pitch_dout_floats(const struct minidl_window *s);

/* ---- the work split: rows [*r0, *r1) (whole images when there are enough) and images
 * [*n0, *n1) of thread t of nt; the calling thread's index and team size */
void conv_thread_rows(const struct minidl_window *s, int t, int nt, int64_t *r0, int64_t *r1);
void conv_image_range(const struct minidl_window *s, int t, int nt, int64_t *n0, int64_t *n1);
void conv_thread_index(int *t, int *nt);

/* dst (HP, WP, C) = src (H, W, C) placed at (top, left), zeros around it. */
void conv_pad_image(float *dst, const float *src, int64_t hp, int64_t wp, int64_t h, int64_t w, int64_t c,
                    int64_t top, int64_t left);
/* dweight += the partial sums threads 1 .. team - 1 left in their scratch (dbias too, if not NULL). */
void conv_sum_partials(float *dweight, float *dbias, const struct minidl_window *s, float *scratch, int team);

/* ---- the two algorithms; each returns MINIDL_OK or MINIDL_OUT_OF_MEMORY (status.h), and the
 * backward-filter ones leave thread t's partial sums for conv_sum_partials in *team threads */
int conv_forward_im2col(float *out, const float *x, const float *weight, const float *bias,
                        const struct minidl_window *s, float *scratch, int threads);
int conv_backward_data_im2col(float *dx, const float *dout, const float *weight,
                              const struct minidl_window *s, float *scratch, int threads);
int conv_backward_filter_im2col(float *dweight, float *dbias, const float *dout, const float *x,
                                const struct minidl_window *s, float *scratch, int threads, int *team);
void conv_forward_implicit(float *out, const float *x, const float *weight, const float *bias,
                           const struct minidl_window *s, float *scratch, int threads);
void conv_backward_data_implicit(float *dx, const float *dout, const float *weight,
                                 const struct minidl_window *s, float *scratch, int threads);
int conv_backward_filter_implicit(float *dweight, float *dbias, const float *dout, const float *x,
                                  const struct minidl_window *s, float *scratch, int threads, int *team);

#endif
