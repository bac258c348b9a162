/* The row kernels of image_transform_forward, one per instruction set (image_transform.c
 * picks one from cpuid; the generic build keeps its scalar rows, the reference).
 *
 * A kernel walks one output row (ow, c) as ow * c floats, VF_LANES at a time: each lane is one
 * (pixel, channel) element, so any channel count fills whole vectors and no interleave is
 * needed; the lanes of one pixel repeat its coordinate arithmetic. The arithmetic is the
 * scalar code's, operation by operation (no FMA contraction), so results are bitwise equal.
 * Lanes whose taps lie more than one image period outside the image (or whose coordinate is
 * NaN) are handed to image_transform_pixel, the scalar code, after the vector is stored. */
#ifndef MINIDL_IMAGE_TRANSFORM_ROWS_H
#define MINIDL_IMAGE_TRANSFORM_ROWS_H

#include <stdint.h>

/* What every output row shares: the element -> (pixel, channel) tables and the sizes. */
struct transform_row_plan {
    const float *ox;      /* (ow * c rounded up to 16,): (float)pixel of each element */
    const int32_t *ch;    /* same length: channel of each element */
    int h, w, c, ow;
    int interpolation, fill_mode;
    float fill_value;
};

/* row (ow, c) = output row oy of image (h, w, c) under transform t (8,) */
typedef void (*transform_row_fn)(float *row, const float *image, const float *t, int oy,
                                 const struct transform_row_plan *plan);

transform_row_fn minidl_transform_row_avx2(void);
transform_row_fn minidl_transform_row_avx512(void);

/* dst (c,) = output pixel (ox, oy) computed by the scalar code (image_transform.c) */
void image_transform_pixel(float *dst, const float *image, const float *t, int ox, int oy,
                           const struct transform_row_plan *plan);

#endif
