#ifndef MINIDL_GEMM_H
#define MINIDL_GEMM_H

/* Row-major single-precision GEMM, BLAS semantics with the output first:
 *   c (m, n) = alpha * op(a) (m, k) @ op(b) (k, n) + beta * c
 * op(a) = a, stored (m, k) with row stride lda, or, when trans_a, a stored (k, m);
 * likewise b. beta == 0 never reads c (it may hold NaN). Uses minidl_num_threads()
 * threads and the micro-kernel of minidl_cpu_isa(). */
void sgemm(float *c, const float *a, const float *b, int m, int n, int k,
           int trans_a, int trans_b, float alpha, float beta, int lda, int ldb, int ldc);

/* The same product with three plain loops: the reference sgemm is tested against. */
void sgemm_ref(float *c, const float *a, const float *b, int m, int n, int k,
               int trans_a, int trans_b, float alpha, float beta, int lda, int ldb, int ldc);

/* Name of the micro-kernel sgemm uses now, e.g. "avx512 12x32". */
const char *sgemm_kernel_name(void);

#endif
