// The GPU profile's softmax rows: one work-group per row of a (rows, k) tensor, its work-items
// taking the columns lane, lane + L, ... (coalesced) and combining the row's maximum and sums
// with tree.cl's reductions; the same results as loss.cl's one-work-item-per-row kernels (a NaN
// in a row makes its maximum, and so the whole row, NaN). Launch: global rows * L, local L (a
// power of two); scratch holds L floats.

#include "tree.cl"

#define ROW_LANES for (int j = get_local_id(0); j < k; j += get_local_size(0))

// The row's maximum and log-sum-exp; probs (k,) = its softmax when probs is not 0
float2 softmax_row_wg(__global float *probs, __global const float *x, const int k,
                      __local float *scratch)
{
    const int lane = get_local_id(0), lanes = get_local_size(0);
    float mx = x[min(lane, k - 1)];
    ROW_LANES mx = max_nan(mx, x[j]);
    mx = tree_max_nan(scratch, 0, lane, lanes, 1, mx);
    float s = 0.0f;
    ROW_LANES s += exp(x[j] - mx);
    s = tree_sum(scratch, 0, lane, lanes, 1, s);
    if (probs) {
        const float inv = 1.0f / s;
        ROW_LANES probs[j] = exp(x[j] - mx) * inv;
    }
    return (float2)(mx, mx + log(s));
}

// out (rows, k) = softmax of x along each row; out may alias x (each lane reads its own
// columns before it writes them)
__kernel void softmax_forward_rows(__global float *out, __global const float *x, const int rows,
                                   const int k, __local float *scratch)
{
    const int r = get_group_id(0);
    softmax_row_wg(out + (size_t)r * k, x + (size_t)r * k, k, scratch);
}

// The softmax cross-entropy of one row: logsumexp(logits) - logits[t] (NaN for a t out of
// range) when dense is 0, else sum_j dense_j * (logsumexp(logits) - logits_j); probs (k,) =
// softmax(logits), written last (it may alias logits)
float softmax_ce_row_wg(__global float *probs, __global const float *logits, const int t,
                        __global const float *dense, const int k, __local float *scratch)
{
    const float lse = softmax_row_wg(0, logits, k, scratch).y;
    float l = 0.0f;
    if (dense) {
        ROW_LANES l += dense[j] * (lse - logits[j]);
    } else {
        ROW_LANES if (j == t) l = lse - logits[j];
    }
    l = tree_sum(scratch, 0, get_local_id(0), get_local_size(0), 1, l);
    softmax_row_wg(probs, logits, k, scratch);
    return (dense || (t >= 0 && t < k)) ? l : NAN;
}

// loss (rows,), probs (rows, k) from logits (rows, k) and targets: int32 class indices (rows,)
// (sparse) or float (rows, k) (dense)
#define SOFTMAX_CE_ROWS(NAME, TARGET_TYPE, T_INDEX, DENSE)                                   \
__kernel void NAME(__global float *probs, __global float *loss, __global const float *logits, \
                   __global const TARGET_TYPE *targets, const int rows, const int k,          \
                   __local float *scratch)                                                    \
{                                                                                             \
    const int r = get_group_id(0);                                                            \
    const size_t o = (size_t)r * k;                                                           \
    const float l = softmax_ce_row_wg(probs + o, logits + o, T_INDEX, DENSE, k, scratch);     \
    if (get_local_id(0) == 0) loss[r] = l;                                                    \
}

SOFTMAX_CE_ROWS(softmax_cross_entropy_forward_sparse_rows, int, targets[r], 0)
SOFTMAX_CE_ROWS(softmax_cross_entropy_forward_dense_rows, float, -1, targets + o)
