/* Ops along the rows of a (rows, n) float32 tensor behind minidl.ops' sort, argsort, top_k,
 * median / quantile (argsort) and cumsum / cumprod (scan); minidl/backends/base.py documents
 * them. Rows are independent: large tensors split their rows across OpenMP threads. */
#ifndef MINIDL_ROW_ORDER_H
#define MINIDL_ROW_ORDER_H

#include <stdint.h>

/* out (rows, n) int32 = the positions that sort each row of x (rows, n) ascending, stable
 * (equal values keep their order), NaN last. Returns MINIDL_OK, or MINIDL_OUT_OF_MEMORY when
 * the merge scratch (n int32 per thread) cannot be had. */
int minidl_rows_argsort(int32_t *out, const float *x, int64_t rows, int64_t n);
/* out (rows, n) = running sums (op 0) or products (op 1) of each row of x (rows, n), in
 * double, one pass (O(n) per row); out may alias x. */
void minidl_rows_scan(float *out, const float *x, int64_t rows, int64_t n, int op);

#endif
