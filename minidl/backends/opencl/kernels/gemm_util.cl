// Helpers of the two SGEMM families: the ragged edges they leave, and the transpose that turns
// a trans_b product into a plain one.

// C (M, N) = alpha * op(A) @ B + beta * C for the rows x cols sub-block starting at
// (row0, col0): one work-item per element, used for the strips the blocked kernels leave.
// c is (M, ldc); a is (M, lda) or, when trans_a, (K, lda); b is (K, ldb).
// Split-K as in gemm_direct.cl: global id z = s sums k in [s * k_slice, (s + 1) * k_slice)
// into c + s * c_slice_stride.
__kernel void gemm_edge(__global float *c, __global const float *a, __global const float *b,
                        const int row0, const int col0, const int rows, const int cols,
                        const int K, const int lda, const int ldb, const int ldc,
                        const int trans_a, const float alpha, const float beta,
                        const int k_slice, const int c_slice_stride)
{
    const int j = get_global_id(0), i = get_global_id(1);
    if (i >= rows || j >= cols) return;
    const int row = row0 + i, col = col0 + j;
    const int k_begin = get_global_id(2) * k_slice;
    const int k_end = min(K, k_begin + k_slice);
    c += get_global_id(2) * c_slice_stride;
    const int a_k_stride = trans_a ? lda : 1;
    const __global float *ap = a + (trans_a ? row : row * lda);
    float s = 0.0f;
    for (int k = k_begin; k < k_end; ++k) s = mad(ap[k * a_k_stride], b[k * ldb + col], s);
    const float result = alpha * s;
    c[row * ldc + col] = beta != 0.0f ? result + beta * c[row * ldc + col] : result;
}

// out (rows, padded_cols) = x (rows, cols) followed by zero columns; one work-item per row
__kernel void pad_columns(__global float *out, __global const float *x, const int rows,
                          const int cols, const int padded_cols)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    __global float *dst = out + (size_t)r * padded_cols;
    __global const float *src = x + (size_t)r * cols;
    for (int j = 0; j < cols; ++j) dst[j] = src[j];
    for (int j = cols; j < padded_cols; ++j) dst[j] = 0.0f;
}

// c (n,) = alpha * sum over s of partial[s * n + i] + beta * c: the end of a split-K product
__kernel void gemm_sum_slices(__global float *c, __global const float *partial, const int slices,
                              const float alpha, const float beta, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    float s = 0.0f;
    for (int slice = 0; slice < slices; ++slice) s += partial[(size_t)slice * n + i];
    c[i] = beta != 0.0f ? alpha * s + beta * c[i] : alpha * s;
}

#ifndef TILE
#define TILE 16   // side of the square blocks staged in local memory, so that reads and writes
#endif            // are both contiguous; the work-group is TILE x TILE

// out (cols, rows) = x (rows, cols).T; local size (TILE, TILE)
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void transpose(__global float *out, __global const float *x, const int rows, const int cols)
{
    __local float tile[TILE][TILE + 1];  // +1: no bank conflicts on the transposed read
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int c = get_group_id(0) * TILE + lx, r = get_group_id(1) * TILE + ly;
    if (r < rows && c < cols) tile[ly][lx] = x[r * cols + c];
    barrier(CLK_LOCAL_MEM_FENCE);
    const int oc = get_group_id(1) * TILE + lx, orow = get_group_id(0) * TILE + ly;
    if (orow < cols && oc < rows) out[orow * rows + oc] = tile[lx][ly];
}
