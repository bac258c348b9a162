#ifndef MINIDL_AUGMENT_H
#define MINIDL_AUGMENT_H

#include <stdint.h>

#include "status.h"

/* Build one training batch from an image array in a single pass: gather the rows `index`,
 * convert to float, normalize per channel (out = pixel * scale[c] + shift[c]), zero-pad by
 * `pad` pixels on each side, crop an out_height x out_width window whose top-left corner in
 * the padded image is (crop_y[i], crop_x[i]), and mirror it left-right where flip[i] != 0.
 * Padded pixels are 0 in the output (i.e. after normalization). Nothing here checks the
 * indices and corners: the caller (minidl.data.augment_batch) does.
 * Returns MINIDL_OK, or MINIDL_OUT_OF_MEMORY when the scratch row could not be allocated. */
int minidl_augment_batch_u8(float *out,              /* out is (batch, out_height, out_width, channels) */
                            const uint8_t *x,        /* x is (n, height, width, channels) */
                            const int64_t *index,    /* index is (batch,): rows of x */
                            const int32_t *crop_y,   /* crop_y is (batch,): 0 .. height + 2*pad - out_height */
                            const int32_t *crop_x,   /* crop_x is (batch,): 0 .. width + 2*pad - out_width */
                            const uint8_t *flip,     /* flip is (batch,) */
                            const float *scale,      /* scale is (channels,) */
                            const float *shift,      /* shift is (channels,) */
                            int batch, int height, int width, int channels, int pad,
                            int out_height, int out_width);

/* The same for float32 images. */
int minidl_augment_batch_f32(float *out, const float *x, const int64_t *index, const int32_t *crop_y,
                             const int32_t *crop_x, const uint8_t *flip, const float *scale,
                             const float *shift, int batch, int height, int width, int channels, int pad,
                             int out_height, int out_width);

#endif
