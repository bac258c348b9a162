// Reductions in two deterministic passes, with no atomics and no local memory:
// pass 1 has `parts` work-items, work-item `part` summing the contiguous chunk
// [part * chunk, (part + 1) * chunk) of the input into partial[part];
// pass 2 (one work-item, or one per column) adds the partials in a fixed order.
// The backend picks parts and chunk; partial is a scratch buffer of `parts` floats (or rows).

// ---------------------------------------------------------------- whole-tensor partial sums
// partial is (parts,); x is (n,)
__kernel void sum_partial(__global float *partial, __global const float *x, const int n,
                          const int parts, const int chunk)
{
    const int part = get_global_id(0);
    if (part >= parts) return;
    const int end = min(n, (part + 1) * chunk);
    float s = 0.0f;
    for (int i = part * chunk; i < end; ++i) s += x[i];
    partial[part] = s;
}

__kernel void sumsq_partial(__global float *partial, __global const float *x, const int n,
                          const int parts, const int chunk)
{
    const int part = get_global_id(0);
    if (part >= parts) return;
    const int end = min(n, (part + 1) * chunk);
    float s = 0.0f;
    for (int i = part * chunk; i < end; ++i) s += x[i] * x[i];
    partial[part] = s;
}

// counts the elements that are inf or nan
__kernel void nonfinite_partial(__global float *partial, __global const float *x, const int n,
                          const int parts, const int chunk)
{
    const int part = get_global_id(0);
    if (part >= parts) return;
    const int end = min(n, (part + 1) * chunk);
    float s = 0.0f;
    for (int i = part * chunk; i < end; ++i) s += isfinite(x[i]) ? 0.0f : 1.0f;
    partial[part] = s;
}

// counts the elements where (pred > 0.5) == (targets > 0.5) and pred is not NaN (a NaN
// prediction is never correct); pred, targets are (n,). With weighted != 0 each correct
// element adds its weight (n,) instead of 1 (weights is not read otherwise).
__kernel void binary_accuracy_partial(__global float *partial, __global const float *pred,
                                      __global const float *targets,
                                      __global const float *weights, const int weighted,
                                      const int n, const int parts, const int chunk)
{
    const int part = get_global_id(0);
    if (part >= parts) return;
    const int end = min(n, (part + 1) * chunk);
    float s = 0.0f;
    for (int i = part * chunk; i < end; ++i)
        if (!is_nan(pred[i]) && (pred[i] > 0.5f) == (targets[i] > 0.5f))
            s += weighted ? weights[i] : 1.0f;
    partial[part] = s;
}

// out (1,) = scale * sum(partial) (+ out when accumulate)
__kernel void sum_finish(__global float *out, __global const float *partial, const int parts,
                         const float scale, const int accumulate)
{
    if (get_global_id(0) != 0) return;
    float s = 0.0f;
    for (int p = 0; p < parts; ++p) s += partial[p];
    out[0] = accumulate ? out[0] + scale * s : scale * s;
}

// out (1,) = 1 if the non-finite count in partial is zero, else 0
__kernel void all_finite_finish(__global float *out, __global const float *partial, const int parts)
{
    if (get_global_id(0) != 0) return;
    float s = 0.0f;
    for (int p = 0; p < parts; ++p) s += partial[p];
    out[0] = s == 0.0f ? 1.0f : 0.0f;
}

// g *= clipnorm / max(||g||, clipnorm), the squared norm read from sumsq (1,) on the device;
// a NaN norm makes every element NaN, as in the numpy backend (fmax would drop it)
__kernel void clip_by_norm_scale(__global float *g, __global const float *sumsq,
                                 const float clipnorm, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float norm = sqrt(sumsq[0]);
    g[i] *= norm <= clipnorm ? 1.0f : clipnorm / norm;
}

// ------------------------------------------------------------------- per-column partial sums
// x is (m, c); partial is (parts, c). Work-item `part` sums rows [part*rows_per_part, ...)
// into its row of partial, which stays in cache while whole rows of x stream past.
__kernel void colsum_partial(__global float *partial, __global const float *x, const int m,
                             const int c, const int rows_per_part, const int parts)
{
    const int part = get_global_id(0);
    if (part >= parts) return;
    const int begin = part * rows_per_part;
    const int end = min(m, begin + rows_per_part);
    __global float *acc = partial + (size_t)part * c;
    for (int col = 0; col < c; ++col) acc[col] = 0.0f;
    for (int row = begin; row < end; ++row) {
        __global const float *src = x + (size_t)row * c;
        for (int col = 0; col < c; ++col) acc[col] += src[col];
    }
}

// out (c,) = scale * column sums of partial (parts, c) (+ out when accumulate)
__kernel void colsum_finish(__global float *out, __global const float *partial, const int parts,
                            const int c, const float scale, const int accumulate)
{
    const int col = get_global_id(0);
    if (col >= c) return;
    float s = 0.0f;
    for (int p = 0; p < parts; ++p) s += partial[p * c + col];
    out[col] = accumulate ? out[col] + scale * s : scale * s;
}

// ------------------------------------------------------------------------------ row metrics
// Each writes flags (rows,) = 1 for a correct row, 0 otherwise; sum_partial/sum_finish count them.
// pred is (rows, k); targets is (rows,) int32 class indices or (rows, k) float.
// A prediction row that holds a NaN is never correct (as TensorFlow's in_top_k).

// the index of the row's first maximum (ties go to the lowest index), or -1 if it holds a NaN
int row_argmax(__global const float *row, const int k)
{
    int best = 0;
    for (int j = 0; j < k; ++j) {
        if (is_nan(row[j])) return -1;
        if (row[j] > row[best]) best = j;
    }
    return best;
}

// 1 when `predicted` is a class (not -1) and equals `target`
float same_class(const int predicted, const int target)
{
    return predicted >= 0 && predicted == target ? 1.0f : 0.0f;
}

__kernel void categorical_accuracy_sparse(__global float *flags, __global const float *pred,
                                          __global const int *targets, const int rows, const int k)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    flags[r] = same_class(row_argmax(pred + r * k, k), targets[r]);
}

__kernel void categorical_accuracy_dense(__global float *flags, __global const float *pred,
                                         __global const float *targets, const int rows, const int k)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    flags[r] = same_class(row_argmax(pred + r * k, k), row_argmax(targets + r * k, k));
}

// correct when fewer than top_k scores are strictly larger than the target's, and none is NaN
float in_top_k(__global const float *row, const int k, const int target, const int top_k)
{
    if (target < 0 || target >= k) return 0.0f;
    const float score = row[target];
    int larger = 0;
    for (int j = 0; j < k; ++j) {
        if (is_nan(row[j])) return 0.0f;
        larger += row[j] > score;
    }
    return larger < top_k ? 1.0f : 0.0f;
}

__kernel void top_k_accuracy_sparse(__global float *flags, __global const float *pred,
                                    __global const int *targets, const int rows, const int k,
                                    const int top_k)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    flags[r] = in_top_k(pred + r * k, k, targets[r], top_k);
}

__kernel void top_k_accuracy_dense(__global float *flags, __global const float *pred,
                                   __global const float *targets, const int rows, const int k,
                                   const int top_k)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    flags[r] = in_top_k(pred + r * k, k, row_argmax(targets + r * k, k), top_k);
}
