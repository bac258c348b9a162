/* bfloat16 GEMM and 2-D convolution with float32 accumulation: the kernels of the
 * mixed_bfloat16 policy (minidl.mixed_precision). Operands are float32 arrays; each is rounded
 * to bfloat16 (round to nearest even, as minidl_round_bfloat16) and the products are summed in
 * float32. With AMX active (amx.h) the rounding happens while the operands are packed into the
 * tiles' layouts and TDPBF16PS computes; otherwise the operands are rounded into float32 copies
 * and the float32 kernels run (the same numbers up to the order of the sums). */
#ifndef MINIDL_GEMM_BF16_H
#define MINIDL_GEMM_BF16_H

#include <stddef.h>

#include "window.h"

/* c (m, n) = alpha * bf16(op(a)) (m, k) @ bf16(op(b)) (k, n) + beta * c, arguments as
 * minidl_sgemm's (gemm.h). Returns MINIDL_OK or MINIDL_OUT_OF_MEMORY. */
int minidl_gemm_bf16(float *c, const float *a, const float *b, float alpha, float beta, int trans_a,
                     int trans_b, int m, int n, int k, int lda, int ldb, int ldc);

/* Reference twin: round copies of a and b, then three plain loops. */
int minidl_gemm_bf16_ref(float *c, const float *a, const float *b, float alpha, float beta, int trans_a,
                         int trans_b, int m, int n, int k, int lda, int ldb, int ldc);

/* The convolutions of conv.h with every operand rounded to bfloat16: x and weight (forward),
 * dout and weight (backward data), dout and x (backward filter); bias and dbias stay float32.
 * Same arguments and scratch as conv.h's kernels (the fallback runs them). */
int minidl_conv2d_forward_bf16(float *out, const float *x, const float *weight, const float *bias,
                               const struct minidl_window *s, float *scratch, size_t scratch_floats);
int minidl_conv2d_backward_data_bf16(float *dx, const float *dout, const float *weight,
                                     const struct minidl_window *s, float *scratch, size_t scratch_floats);
int minidl_conv2d_backward_filter_bf16(float *dweight, float *dbias, const float *dout, const float *x,
                                       const struct minidl_window *s, float *scratch, size_t scratch_floats);

/* Reference twins: rounded copies, then conv.h's plain-loop references. */
int minidl_conv2d_forward_bf16_ref(float *out, const float *x, const float *weight, const float *bias,
                                   const struct minidl_window *s);
int minidl_conv2d_backward_data_bf16_ref(float *dx, const float *dout, const float *weight,
                                         const struct minidl_window *s);
int minidl_conv2d_backward_filter_bf16_ref(float *dweight, float *dbias, const float *dout, const float *x,
                                           const struct minidl_window *s);

/* 1 when the bf16 kernels run on AMX tiles (else they round copies, allocated per call: the
 * cpu backend then rounds into its own kept buffers instead). */
int minidl_bf16_native(void);

/* What the bf16 kernels run now: "amx" (tiles) or "rounded" (rounded copies + float32 kernels). */
const char *minidl_bf16_kernel_name(void);

#endif
