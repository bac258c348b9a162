#ifndef MINIDL_CONV_IMPLICIT_H
#define MINIDL_CONV_IMPLICIT_H

#include <stddef.h>

#include "../window.h"

/* Stride-1 convolution of one image without an im2col matrix ("implicit GEMM").
 *
 * The geometry g is one image's: n = 1, stride 1, no padding. The input is already padded:
 * xin (H, W, C), output (OH, OW, F) with OH = H - KH + 1, OW = W - KW + 1. Number the
 * outputs q = oy * W + ox (a pitch of W: the W - OW outputs past the end of each row are
 * computed and dropped). The patch of output q is KH runs of KW * C contiguous floats, run
 * ky starting at xin + q * C + ky * W * C, so for each ky the patches form a matrix with row
 * stride C that the micro-kernel reads in place. Each run is cut into pieces of at most the
 * kernel's KC floats; the weights are packed piece by piece to match. */

/* Outputs q in [0, rows) cover the image: (OH - 1) * W + OW. */
long implicit_conv_rows(const struct minidl_window *g);

/* Floats of the packed weights, for any ISA. */
size_t implicit_conv_packed_weight_floats(const struct minidl_window *g);

/* packed = weight (KH, KW, C, F) in the piece-by-piece layout of the active micro-kernel. */
void implicit_conv_pack_weight(float *packed, const float *weight, const struct minidl_window *g);

/* out (OH, OW, F) = conv(xin, weight) + bias (may be NULL). */
void implicit_conv_forward_image(float *out, const float *xin, const float *packed_weight,
                                 const float *bias, const struct minidl_window *g);

/* dweight (KH, KW, C, F) = beta * dweight + sum over q of patch(q)^T dout(q), where
 * packed_dout holds dout in the pitch-W layout (rows past OW zero), as packed by
 * sgemm_pack_b with k = implicit_conv_rows(g), n = F. Returns MINIDL_OK or MINIDL_OUT_OF_MEMORY. */
int implicit_conv_backward_filter_image(float *dweight, const float *xin, const float *packed_dout,
                                        float beta, const struct minidl_window *g);

#endif
