/* Binary (xnor-popcount) convolution for inference, where both the input and the kernel are
 * larq signs (+1 for x >= 0, -1 below). Values are packed 32 to an int32 word along channels:
 * bit b of word k is 1 where channel 32 k + b is negative (-1); bits past the last channel are
 * 0 in both operands, so they never count. A dot product over K channels of +-1 values is then
 * K - 2 * popcount(x_bits ^ w_bits). A dense layer is the 1 x 1 convolution of a 1 x 1 image.
 *
 * The popcount micro-kernel is picked per call: AVX-512 VPOPCNTDQ on the avx512 path when the
 * CPU has it, the AVX2 nibble look-up (vpshufb) on avx2 (and on avx512 without VPOPCNTDQ),
 * __builtin_popcount otherwise (minidl_binary_popcount_path says which). */
#ifndef MINIDL_BINARY_CONV_H
#define MINIDL_BINARY_CONV_H

#include <stdint.h>

/* bits (pixels, cw) = the sign bits of x (pixels, c), cw = ceil(c / 32). */
void minidl_binary_pack_input(int32_t *bits, const float *x, int64_t pixels, int64_t c);

/* bits (taps * cw, f) = the sign bits of weight (taps, c, f): word (t * cw + k, j) holds
 * channels 32 k .. 32 k + 31 of tap t of filter j (the layout the micro-kernels read). */
void minidl_binary_pack_kernel(int32_t *bits, const float *weight, int64_t taps, int64_t c, int64_t f);

/* out (n, oh, ow, f) = the integer dot product of each +-1 window of the packed input bits
 * (n, h, w, cw) with each packed filter (kernel_bits (kh * kw * cw, f)), plus bias (f, or NULL).
 * A tap in the padding counts as an input of +1 when pad_value is 1, and is left out (an input
 * of 0, larq's default zero padding) when pad_value is 0. win->groups must be 1. Returns
 * MINIDL_OUT_OF_MEMORY if the per-thread scratch cannot be allocated. */
int minidl_binary_conv2d_forward(float *out, const int32_t *bits, const int32_t *kernel_bits, const float *bias,
                                 int pad_value, const struct minidl_window *win);

/* out (n, poh, pow, f) = the maxima of the windows of `pool` (a max pooling of the convolution's
 * output (n, oh, ow, f): pool->h == win->oh, pool->w == win->ow, pool->c == f) over the
 * convolution above, as minidl_max_pool2d_forward would give them (a NaN wins, padding never
 * does), without writing the full-size convolution anywhere. */
int minidl_binary_conv2d_pool_forward(float *out, const int32_t *bits, const int32_t *kernel_bits,
                                      const float *bias, int pad_value, const struct minidl_window *win,
                                      const struct minidl_window *pool);

/* The same result, one bit at a time: the plain twin the tests compare with. */
void minidl_binary_conv2d_forward_reference(float *out, const int32_t *bits, const int32_t *kernel_bits,
                                            const float *bias, int pad_value, const struct minidl_window *win);

/* 0: generic, 1: avx2 (vpshufb), 2: avx512 (VPOPCNTDQ): the micro-kernel the active ISA runs. */
int minidl_binary_popcount_path(void);

#endif
