// Axis permutation: one work-item per output element. `geometry` holds 2 * rank ints: the
// output's shape, then for each output axis the stride of the x axis it reads (elements).
__kernel void transpose(__global float *out, __global const float *x, __global const int *geometry,
                        const int rank, const int total)
{
    const int i = get_global_id(0);
    if (i >= total) return;
    int rem = i, offset = 0;
    for (int a = rank - 1; a >= 0; --a) {
        const int size = geometry[a];
        offset += (rem % size) * geometry[rank + a];
        rem /= size;
    }
    out[i] = x[offset];
}
