#ifndef MINIDL_CONV_IMPLICIT_H
#define MINIDL_CONV_IMPLICIT_H

#include <stddef.h>

/* Stride-1 convolution of one image without an im2col matrix ("implicit GEMM").
 *
 * The input is already padded: xin (HP, WP, C), output (OH, OW, F) with
 * OH = HP - KH + 1, OW = WP - KW + 1. Number the outputs q = oy * WP + ox (a pitch of
 * WP: the WP - OW outputs past the end of each row are computed and dropped). The
 * patch of output q is KH runs of KW * C contiguous floats, run ky starting at
 * xin + q * C + ky * WP * C, so for each ky the patches form a matrix with row stride C
 * that the micro-kernel reads in place. Each run is cut into pieces of at most the
 * kernel's KC floats; the weights are packed piece by piece to match. */
typedef struct {
    int hp, wp, c;
    int kh, kw;
    int oh, ow, f;
} implicit_conv_geom;

/* Outputs q in [0, rows) cover the image: (OH - 1) * WP + OW. */
long implicit_conv_rows(const implicit_conv_geom *g);

/* Floats of the packed weights, for any ISA. */
size_t implicit_conv_packed_weight_floats(const implicit_conv_geom *g);

/* packed = weight (KH, KW, C, F) in the piece-by-piece layout of the active micro-kernel. */
void implicit_conv_pack_weight(float *packed, const float *weight, const implicit_conv_geom *g);

/* out (OH, OW, F) = conv(xin, weight) + bias (may be NULL), max(0, .) when relu. */
void implicit_conv_forward_image(float *out, const float *xin, const float *packed_weight,
                                 const float *bias, int relu, const implicit_conv_geom *g);

/* dweight (KH, KW, C, F) = beta * dweight + sum over q of patch(q)^T dout(q), where
 * packed_dout holds dout in the pitch-WP layout (rows past OW zero), as packed by
 * sgemm_pack_b with k = implicit_conv_rows(g), n = F. */
void implicit_conv_backward_filter_image(float *dweight, const float *xin, const float *packed_dout,
                                         float beta, const implicit_conv_geom *g);

#endif
