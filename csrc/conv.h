#ifndef MINIDL_CONV_H
#define MINIDL_CONV_H

#include <stddef.h>

/* Geometry of one 2-D convolution, channels-last:
 *   x (N, H, W, C) * weight (KH, KW, C, F) -> out (N, OH, OW, F)
 * with out[n, oy, ox, f] = sum over ky, kx, c of
 *   x[n, oy * SH - pad_top + ky, ox * SW - pad_left + kx, c] * weight[ky, kx, c, f]
 * (input positions outside the image read as zero). */
typedef struct {
    int n, h, w, c;
    int kh, kw;
    int sh, sw;
    int pad_top, pad_left;
    int oh, ow, f;
} conv2d_shape;

/* Floats of scratch the fast kernels need for this shape with minidl_num_threads()
 * threads; allocate it once per layer and pass it to every call. A smaller scratch
 * makes them use fewer threads (at least one thread's worth is required). It must be
 * 64-byte aligned: packed weights in it are read with aligned vector loads. */
size_t conv2d_scratch_floats(const conv2d_shape *s);

/* Each fast kernel returns 0, or -1 when the scratch is too small (nothing is written).
 * bias (F,) may be NULL; relu != 0 applies max(0, .) to the output. */
int conv2d_forward(float *out, const float *x, const float *weight, const float *bias,
                   const conv2d_shape *s, float *scratch, size_t scratch_floats, int relu);
/* dx (N, H, W, C) = gradient of the loss w.r.t. x, from dout (N, OH, OW, F). */
int conv2d_backward_data(float *dx, const float *dout, const float *weight,
                         const conv2d_shape *s, float *scratch, size_t scratch_floats);
/* dweight (KH, KW, C, F) and dbias (F,) (may be NULL), overwritten. */
int conv2d_backward_filter(float *dweight, float *dbias, const float *dout, const float *x,
                           const conv2d_shape *s, float *scratch, size_t scratch_floats);

/* Reference twins: the definition above as plain loops, single-threaded. */
void conv2d_forward_ref(float *out, const float *x, const float *weight, const float *bias,
                        const conv2d_shape *s, int relu);
void conv2d_backward_data_ref(float *dx, const float *dout, const float *weight, const conv2d_shape *s);
void conv2d_backward_filter_ref(float *dweight, float *dbias, const float *dout, const float *x,
                                const conv2d_shape *s);

#endif
