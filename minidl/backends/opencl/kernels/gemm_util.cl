// Helpers of the SGEMM kernels: the sum of split-K slices, and the transpose that turns a
// trans_b product into a plain one.

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
