/* Reductions and metric counts; the float reductions use the vector kernels block by block. */
#include <math.h>

#include "internal/parallel.h"
#include "internal/targets.h"
#include "internal/vector_kernels.h"
#include "metrics.h"

static void store(float *out, double value, int accumulate)
{
    out[0] = accumulate ? (float)((double)out[0] + value) : (float)value;
}

/* The first index of the largest value of row (k), NaN skipped (unless at index 0); the
 * compiler makes this loop branch-free (maxss, cmov). */
static int64_t row_argmax(const float *row, int64_t k)
{
    int64_t best = 0;
    for (int64_t j = 1; j < k; j++)
        if (row[j] > row[best]) best = j;
    return best;
}

static int has_nan(const float *row, int64_t k)
{
    int nan = 0;
    for (int64_t j = 0; j < k; j++) /* no early exit: the compiler vectorizes it */
        nan |= row[j] != row[j];
    return nan;
}

/* Whether the argmax of row (k) is the target class; a row holding a NaN never counts. Only a
 * row that would count is scanned for NaN: every NaN-aware form of the argmax loop itself ran
 * 40-50% slower. */
static int argmax_is(const float *row, int64_t k, int64_t target)
{
    return row_argmax(row, k) == target && !has_nan(row, k);
}

/* Whether fewer than top_k scores of row (k) are strictly larger than the target's; a row
 * holding a NaN never counts (as in argmax_is, only a row that would count is scanned). */
static int in_top_k(const float *row, int64_t k, int64_t target, int64_t top_k)
{
    float score = row[target];
    int64_t larger = 0;
    for (int64_t j = 0; j < k; j++) larger += row[j] > score;
    return larger < top_k && !has_nan(row, k);
}

void minidl_sum(float *out, const float *x, int accumulate, int64_t n)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    double total = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : total) if (n >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < minidl_blocks(n); b++) total += vk->sum(x + b * MINIDL_BLOCK, minidl_block_len(n, b));
    store(out, total, accumulate);
}

void minidl_all_finite(float *out, const float *x, int64_t n)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    int finite = 1;
#pragma omp parallel for schedule(static) reduction(&& : finite) if (n >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < minidl_blocks(n); b++)
        finite = finite && vk->all_finite(x + b * MINIDL_BLOCK, minidl_block_len(n, b));
    out[0] = finite ? 1.0f : 0.0f;
}

/* What a correct row (element) i adds: 1, or its weight. */
static double credit(const float *weights, int64_t i)
{
    return weights ? (double)weights[i] : 1.0;
}

int minidl_categorical_accuracy_sparse(float *out, const float *pred, const int32_t *targets,
                                       const float *weights, int accumulate, int64_t n, int64_t k)
{
    if (targets_out_of_range(targets, n, k)) return MINIDL_TARGET_OUT_OF_RANGE;
    double correct = 0.0;
    for (int64_t r = 0; r < n; r++)
        if (argmax_is(pred + r * k, k, targets[r])) correct += credit(weights, r);
    store(out, correct, accumulate);
    return MINIDL_OK;
}

void minidl_categorical_accuracy_dense(float *out, const float *pred, const float *targets,
                                       const float *weights, int accumulate, int64_t n, int64_t k)
{
    double correct = 0.0;
    for (int64_t r = 0; r < n; r++)
        if (argmax_is(pred + r * k, k, row_argmax(targets + r * k, k))) correct += credit(weights, r);
    store(out, correct, accumulate);
}

void minidl_binary_accuracy(float *out, const float *pred, const float *targets, const float *weights,
                            int accumulate, int64_t n)
{
    if (weights) {
        double correct = 0.0;
        for (int64_t i = 0; i < n; i++)
            if (!isnan(pred[i]) && (pred[i] > 0.5f) == (targets[i] > 0.5f)) correct += weights[i];
        store(out, correct, accumulate);
        return;
    }
    int64_t correct = 0;   /* the unweighted count stays a branch-free integer loop */
    for (int64_t i = 0; i < n; i++) /* a NaN prediction is never correct */
        correct += !isnan(pred[i]) && (pred[i] > 0.5f) == (targets[i] > 0.5f);
    store(out, (double)correct, accumulate);
}

int minidl_top_k_accuracy_sparse(float *out, const float *pred, const int32_t *targets, const float *weights,
                                 int64_t top_k, int accumulate, int64_t n, int64_t k)
{
    if (targets_out_of_range(targets, n, k)) return MINIDL_TARGET_OUT_OF_RANGE;
    double correct = 0.0;
    for (int64_t r = 0; r < n; r++)
        if (in_top_k(pred + r * k, k, targets[r], top_k)) correct += credit(weights, r);
    store(out, correct, accumulate);
    return MINIDL_OK;
}

void minidl_top_k_accuracy_dense(float *out, const float *pred, const float *targets, const float *weights,
                                 int64_t top_k, int accumulate, int64_t n, int64_t k)
{
    double correct = 0.0;
    for (int64_t r = 0; r < n; r++)
        if (in_top_k(pred + r * k, k, row_argmax(targets + r * k, k), top_k)) correct += credit(weights, r);
    store(out, correct, accumulate);
}
