/* The general tensor ops behind minidl.ops (minidl/backends/base.py, "tensor ops"): float32
 * (or 4-byte int32 for the copies), C-contiguous outputs. A tensor of rank <= 8 is described
 * by `shape` (of the output, the iteration space) and per-operand element `strides` (0 on a
 * broadcast axis, any sign for a strided view). `op` is the position of the operation's name
 * in UNARY_OPS / BINARY_OPS / REDUCE_OPS of minidl/backends/base.py. */
#ifndef MINIDL_TENSOR_OPS_H
#define MINIDL_TENSOR_OPS_H

#include <stdint.h>

/* out (n) = f(x (n)); out may alias x */
void minidl_tensor_unary(float *out, const float *x, int64_t n, int op);
/* out (shape) = a (op) b, a and b read through their strides */
void minidl_tensor_binary(float *out, const float *a, const float *b, int rank, const int64_t *shape,
                          const int64_t *a_strides, const int64_t *b_strides, int op);
/* out (shape) = c != 0 ? a : b */
void minidl_tensor_where(float *out, const float *c, const float *a, const float *b, int rank,
                         const int64_t *shape, const int64_t *c_strides, const int64_t *a_strides,
                         const int64_t *b_strides);
/* out (out_n) = reduction of x (x_shape, contiguous); x's element at multi-index i goes to
 * out[sum_k i_k * out_strides[k]] (out_strides 0 on reduced axes). Returns 0, or -1 when
 * scratch memory runs out. */
int minidl_tensor_reduce(float *out, const float *x, int rank, const int64_t *x_shape,
                         const int64_t *out_strides, int64_t out_n, int op);
/* gather: out (shape) = x[offset + i . strides], 4-byte elements */
void minidl_tensor_strided_copy(void *out, const void *x, int rank, const int64_t *shape,
                                int64_t offset, const int64_t *strides);
/* scatter-add: out[offset + i . strides] += x (shape), positions distinct */
void minidl_tensor_strided_add(float *out, const float *x, int rank, const int64_t *shape,
                               int64_t offset, const int64_t *strides);
/* out (outer, m, inner) = x (outer, n, inner) at indices (m), 4-byte elements; indices were
 * checked to be in [-n, n) */
void minidl_tensor_take(void *out, const void *x, const int32_t *indices, int64_t outer, int64_t n,
                        int64_t inner, int64_t m);
/* dx (outer, n, inner) += dout (outer, m, inner) at indices (m) */
void minidl_tensor_take_backward(float *dx, const float *dout, const int32_t *indices,
                                 int64_t outer, int64_t n, int64_t inner, int64_t m);
/* out (rows) = index of the max (op 0) / min (op 1) of each row of x (rows, k) */
void minidl_tensor_arg_reduce(int32_t *out, const float *x, int64_t rows, int64_t k, int op);
void minidl_tensor_float_to_int(int32_t *out, const float *x, int64_t n);
void minidl_tensor_int_to_float(float *out, const int32_t *x, int64_t n);
void minidl_tensor_arange_float(float *out, int64_t n, double start, double step);
void minidl_tensor_arange_int(int32_t *out, int64_t n, double start, double step);

#endif
