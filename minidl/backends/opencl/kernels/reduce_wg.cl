// Reductions for GPUs (the GPU profile's): work-groups cooperate through local-memory tree
// sums, then a second pass adds the per-group partials in a fixed order (deterministic, no
// atomics). The group size is the launch's (the backend picks a power of two from the
// device's limits and preferred multiple); `scratch` is local memory of one float per work-item.
//
// Column reductions of x viewed as (m, c): work-groups of (COLUMNS, ROWS) work-items, x
// column-coalesced (neighbouring work-items read neighbouring columns of one row); group row g
// of G sums rows g * ROWS + ly, stepping G * ROWS, into row g of a (G, c) partial, which
// reduce.cl's colsum_finish or batchnorm.cl's *_finish kernels add up per column.
// Global size (ceil(c / COLUMNS) * COLUMNS, G * ROWS), local (COLUMNS, ROWS), both powers of two.

#include "tree.cl"

// The column reduction's loop over the rows of this work-item's column col (if col < c)
#define FOR_MY_ROWS(row)                                                              \
    for (int row = get_group_id(1) * get_local_size(1) + get_local_id(1);             \
         col < c && row < m; row += get_num_groups(1) * get_local_size(1))

// Sum over the work-group's rows, stored by its first row of work-items in partial row g
#define STORE_COLUMN_PARTIAL(partial, v)                                              \
    do {                                                                              \
        const float total_ = tree_sum(scratch, get_local_id(0), get_local_id(1),      \
                                      get_local_size(1), get_local_size(0), v);       \
        if (get_local_id(1) == 0 && col < c)                                          \
            (partial)[(size_t)get_group_id(1) * c + col] = total_;                    \
    } while (0)

// partial (G, c) = column sums of x (m, c)
__kernel void colsum_partial_wg(__global float *partial, __global const float *x, const int m,
                                const int c, __local float *scratch)
{
    const int col = get_global_id(0);
    float s = 0.0f;
    FOR_MY_ROWS(row) s += x[(size_t)row * c + col];
    STORE_COLUMN_PARTIAL(partial, s);
}

// partial (G, c) = column sums of (x - mean)^2
__kernel void batchnorm_sqdev_partial_wg(__global float *partial, __global const float *x,
                                         __global const float *mean, const int m, const int c,
                                         __local float *scratch)
{
    const int col = get_global_id(0);
    const float mu = col < c ? mean[col] : 0.0f;
    float s = 0.0f;
    FOR_MY_ROWS(row) {
        const float d = x[(size_t)row * c + col] - mu;
        s += d * d;
    }
    STORE_COLUMN_PARTIAL(partial, s);
}

// partial_dbeta, partial_dgamma (G, c) = column sums of dout and of dout * (x - mean) * invstd
__kernel void batchnorm_backward_partial_wg(__global float *partial_dbeta,
                                            __global float *partial_dgamma,
                                            __global const float *dout, __global const float *x,
                                            __global const float *mean,
                                            __global const float *invstd, const int m,
                                            const int c, __local float *scratch)
{
    const int col = get_global_id(0);
    const float mu = col < c ? mean[col] : 0.0f, is = col < c ? invstd[col] : 0.0f;
    float sb = 0.0f, sg = 0.0f;
    FOR_MY_ROWS(row) {
        const size_t o = (size_t)row * c + col;
        sb += dout[o];
        sg += dout[o] * (x[o] - mu) * is;
    }
    STORE_COLUMN_PARTIAL(partial_dbeta, sb);
    STORE_COLUMN_PARTIAL(partial_dgamma, sg);
}

// ----------------------------------------------------------- whole-tensor reductions
// One-dimensional work-groups; group g of G sums items g * L + l, stepping G * L, into
// partial[g]; a finish kernel run as one work-group adds the G partials.

#define FOR_MY_ITEMS(i) \
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
#define STORE_PARTIAL(v)                                                                     \
    do {                                                                                     \
        const float total_ = tree_sum(scratch, 0, get_local_id(0), get_local_size(0), 1, v); \
        if (get_local_id(0) == 0) partial[get_group_id(0)] = total_;                         \
    } while (0)

__kernel void sum_partial_wg(__global float *partial, __global const float *x, const int n,
                             __local float *scratch)
{
    float s = 0.0f;
    FOR_MY_ITEMS(i) s += x[i];
    STORE_PARTIAL(s);
}

__kernel void sumsq_partial_wg(__global float *partial, __global const float *x, const int n,
                               __local float *scratch)
{
    float s = 0.0f;
    FOR_MY_ITEMS(i) s += x[i] * x[i];
    STORE_PARTIAL(s);
}

// counts the elements that are inf or nan
__kernel void nonfinite_partial_wg(__global float *partial, __global const float *x, const int n,
                                   __local float *scratch)
{
    float s = 0.0f;
    FOR_MY_ITEMS(i) s += isfinite(x[i]) ? 0.0f : 1.0f;
    STORE_PARTIAL(s);
}

// counts the elements where (pred > 0.5) == (targets > 0.5) and pred is not NaN; with
// weighted != 0 each adds its weight (n,) instead of 1 (reduce.cl's binary_accuracy_partial)
__kernel void binary_accuracy_partial_wg(__global float *partial, __global const float *pred,
                                         __global const float *targets,
                                         __global const float *weights, const int weighted,
                                         const int n, __local float *scratch)
{
    float s = 0.0f;
    FOR_MY_ITEMS(i) if (!is_nan(pred[i]) && (pred[i] > 0.5f) == (targets[i] > 0.5f))
        s += weighted ? weights[i] : 1.0f;
    STORE_PARTIAL(s);
}

// The sum of partial (parts,) by one work-group
float group_total(__global const float *partial, const int parts, __local float *scratch)
{
    float s = 0.0f;
    for (int p = get_local_id(0); p < parts; p += get_local_size(0)) s += partial[p];
    return tree_sum(scratch, 0, get_local_id(0), get_local_size(0), 1, s);
}

// out (1,) = scale * sum(partial) (+ out when accumulate); one work-group
__kernel void sum_finish_wg(__global float *out, __global const float *partial, const int parts,
                            const float scale, const int accumulate, __local float *scratch)
{
    const float s = group_total(partial, parts, scratch);
    if (get_local_id(0) == 0) out[0] = accumulate ? out[0] + scale * s : scale * s;
}

// out (1,) = 1 if the non-finite count in partial is zero, else 0; one work-group
__kernel void all_finite_finish_wg(__global float *out, __global const float *partial,
                                   const int parts, __local float *scratch)
{
    const float s = group_total(partial, parts, scratch);
    if (get_local_id(0) == 0) out[0] = s == 0.0f ? 1.0f : 0.0f;
}
