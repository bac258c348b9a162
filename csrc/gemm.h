#ifndef MINIDL_GEMM_H
#define MINIDL_GEMM_H

#include <stdint.h>

/* Row-major single-precision GEMM, BLAS semantics with the output first:
 *   c (m, n) = alpha * op(a) (m, k) @ op(b) (k, n) + beta * c
 * op(a) = a, stored (m, k) with row stride lda, or, when trans_a, a stored (k, m);
 * likewise b. beta == 0 never reads c (it may hold NaN). Uses minidl_num_threads()
 * threads and the micro-kernel of minidl_cpu_isa(). Returns MINIDL_OK, or
 * MINIDL_OUT_OF_MEMORY when a packing buffer cannot be allocated (status.h). */
int minidl_sgemm(float *c, const float *a, const float *b, float alpha, float beta, int trans_a,
                 int trans_b, int m, int n, int k, int lda, int ldb, int ldc);

/* The same product with three plain loops: the reference minidl_sgemm is tested against. */
void minidl_sgemm_ref(float *c, const float *a, const float *b, float alpha, float beta, int trans_a,
                      int trans_b, int m, int n, int k, int lda, int ldb, int ldc);

/* Name of the micro-kernel minidl_sgemm uses now, e.g. "avx512 12x32 intel". */
const char *minidl_sgemm_kernel_name(void);

/* The micro-kernels this CPU can run (index 0 .. count - 1), and a choice among them for tests
 * and benchmarks: minidl_sgemm_select_kernel(name) makes every SGEMM and convolution use it
 * while the ISA in use can run it (NULL or "": back to the default of the ISA and CPU). Returns
 * 1, or 0 for a name this CPU has not (the default then runs). */
int minidl_sgemm_kernel_count(void);
const char *minidl_sgemm_kernel_names(int index);
int minidl_sgemm_select_kernel(const char *name);

/* A right operand op(b) (k, n) packed once for many products with it (an RNN's recurrent kernel,
 * used at every time step): minidl_sgemm_pack_b writes it into `packed`, which holds
 * minidl_sgemm_packed_b_floats(k, n) floats and must be 64-byte aligned, in the layout of the
 * micro-kernel in use, whose table index it stores in *kernel; minidl_sgemm_packed then computes
 * c (m, n) = a (m, k, row stride lda) @ op(b) + beta * c with that micro-kernel, as minidl_sgemm
 * would but without packing B again. Both return MINIDL_OK; minidl_sgemm_packed returns
 * MINIDL_INVALID_SIZE for a kernel index this CPU cannot run, or MINIDL_OUT_OF_MEMORY. */
int64_t minidl_sgemm_packed_b_floats(int k, int n);
int minidl_sgemm_pack_b(float *packed, int *kernel, const float *b, int trans_b, int k, int n, int ldb);
int minidl_sgemm_packed(float *c, const float *a, const float *packed, float beta, int kernel, int m, int n,
                        int k, int lda, int ldc);

#endif
