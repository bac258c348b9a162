/* int8 inference kernels: uint8 activations x int8 weights -> int32, requantized.
 *
 * Quantized values: an activation tensor holds uint8 q with real value scale * (q - zero_point)
 * (one scale and zero point per tensor); weights are symmetric int8 per output channel, limited
 * to [-63, 63] (7 bits) so that AVX2's vpmaddubsw, which adds two u8 x s8 products into a
 * saturating int16, never saturates: 2 * 255 * 63 = 32130 < 32767. Every ISA path therefore
 * computes the same exact int32 sums, and the results are equal bit for bit on every path.
 *
 * Packed weights `w` are (kp / 4, np, 4) int8: element (k, n) of the (k, n) weight matrix at
 * w[((k / 4) * np + n) * 4 + k % 4], kp = k rounded up to 4 and np = n rounded up to
 * MINIDL_QGEMM_NR, the padding zero. minidl/quantization/packing.py makes them.
 *
 * Epilogue of every output element (row r, column j), with acc the int32 sum over k of
 * a[r, k] * w[k, j] and column_offset[j] = bias_q[j] - a_zero_point * sum_k w[k, j] (the
 * compensation for the activations' zero point, bias folded in at scale a_scale * w_scale[j]):
 *     v = (float)(acc + column_offset[j]) * multiplier[j]       (float32, one rounding)
 *   uint8 out: q = rint(clamp(v, lo, 255 - out_zero_point)) + out_zero_point,
 *              lo = relu ? 0 : -out_zero_point
 *   float out: y = relu ? max(v, 0) : v
 * The int32 addition wraps (two's complement), as numpy's does. */
#ifndef MINIDL_QGEMM_H
#define MINIDL_QGEMM_H

#include <stdint.h>

#include "window.h"

#define MINIDL_QGEMM_NR 16

/* The inner loop this CPU runs: "vnni" (vpdpbusd), "avx2" (vpmaddubsw + vpmaddwd) or "generic". */
const char *minidl_qgemm_path(void);
/* Whether the CPU has AVX512_VNNI (cpuid leaf 7, ecx bit 11). */
int minidl_cpu_has_avx512_vnni(void);

/* out (m, n) uint8 or float (out_u8 / out_f32, the other NULL) = epilogue(a (m, k) @ w). */
int minidl_qgemm_forward(uint8_t *out_u8, float *out_f32, const uint8_t *a, const int8_t *w,
                         const int32_t *column_offset, const float *multiplier, int32_t out_zero_point,
                         int32_t relu, int64_t m, int64_t k, int64_t n);

/* out (n, oh, ow, f) = epilogue(conv of x (n, h, w, c) uint8 with w packed from the
 * (kh * kw * c, f) kernel matrix); padding positions hold x_zero_point (a real 0). */
int minidl_qconv2d_forward(uint8_t *out_u8, float *out_f32, const uint8_t *x, const int8_t *w,
                           const int32_t *column_offset, const float *multiplier, int32_t out_zero_point,
                           int32_t relu, int32_t x_zero_point, const struct minidl_window *win);

/* out = clamp(rint(x * inv_scale) + zero_point, 0, 255); out = scale * (x - zero_point). */
void minidl_quantize_u8(uint8_t *out, const float *x, float inv_scale, int32_t zero_point, int64_t count);
void minidl_dequantize_u8(float *out, const uint8_t *x, float scale, int32_t zero_point, int64_t count);

/* out = clamp(((a - a_zero_point) * a_multiplier + (b - b_zero_point) * b_multiplier
 *              + 2^(MINIDL_QADD_SHIFT - 1)) >> MINIDL_QADD_SHIFT) + out_zero_point, lo, 255),
 * lo = relu ? out_zero_point : 0: the sum of two uint8 tensors of other scales, in int64
 * fixed point (multiplier = round(scale / out_scale * 2^MINIDL_QADD_SHIFT), |multiplier| < 2^31;
 * >> is the arithmetic shift, a floor). */
#define MINIDL_QADD_SHIFT 20
void minidl_add_u8(uint8_t *out, const uint8_t *a, const uint8_t *b, int32_t a_zero_point,
                   int32_t b_zero_point, int64_t a_multiplier, int64_t b_multiplier,
                   int32_t out_zero_point, int32_t relu, int64_t count);

/* Max pooling of uint8 (n, h, w, c) over the window's real positions (padding never wins). */
void minidl_max_pool2d_u8(uint8_t *out, const uint8_t *x, const struct minidl_window *win);

#endif
