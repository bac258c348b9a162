/* Reductions and metric counts; the float reductions use the vector kernels block by block. */
#include "internal/parallel.h"
#include "internal/vector_kernels.h"
#include "metrics.h"

static void store(float *out, double value, int accumulate)
{
    out[0] = accumulate ? (float)((double)out[0] + value) : (float)value;
}

static int64_t first_bad_target(const int32_t *targets, int64_t n, int64_t k)
{
    for (int64_t r = 0; r < n; r++)
        if (targets[r] < 0 || targets[r] >= k) return r;
    return -1;
}

/* The first index of the largest value of row (k). */
static int64_t row_argmax(const float *row, int64_t k)
{
    int64_t best = 0;
    for (int64_t j = 1; j < k; j++)
        if (row[j] > row[best]) best = j;
    return best;
}

static int64_t strictly_larger(const float *row, int64_t k, float score)
{
    int64_t count = 0;
    for (int64_t j = 0; j < k; j++) count += row[j] > score;
    return count;
}

void minidl_sum(float *out, const float *x, int64_t n, int accumulate)
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

int64_t minidl_categorical_accuracy_sparse(float *out, const float *pred, const int32_t *targets, int64_t n,
                                           int64_t k, int accumulate)
{
    int64_t bad = first_bad_target(targets, n, k);
    if (bad >= 0) return bad;
    int64_t correct = 0;
    for (int64_t r = 0; r < n; r++) correct += row_argmax(pred + r * k, k) == targets[r];
    store(out, (double)correct, accumulate);
    return -1;
}

void minidl_categorical_accuracy_dense(float *out, const float *pred, const float *targets, int64_t n,
                                       int64_t k, int accumulate)
{
    int64_t correct = 0;
    for (int64_t r = 0; r < n; r++) correct += row_argmax(pred + r * k, k) == row_argmax(targets + r * k, k);
    store(out, (double)correct, accumulate);
}

void minidl_binary_accuracy(float *out, const float *pred, const float *targets, int64_t n, int accumulate)
{
    int64_t correct = 0;
    for (int64_t i = 0; i < n; i++) correct += (pred[i] > 0.5f) == (targets[i] > 0.5f);
    store(out, (double)correct, accumulate);
}

int64_t minidl_top_k_accuracy_sparse(float *out, const float *pred, const int32_t *targets, int64_t n,
                                     int64_t k, int64_t top_k, int accumulate)
{
    int64_t bad = first_bad_target(targets, n, k);
    if (bad >= 0) return bad;
    int64_t correct = 0;
    for (int64_t r = 0; r < n; r++) correct += strictly_larger(pred + r * k, k, pred[r * k + targets[r]]) < top_k;
    store(out, (double)correct, accumulate);
    return -1;
}

void minidl_top_k_accuracy_dense(float *out, const float *pred, const float *targets, int64_t n, int64_t k,
                                 int64_t top_k, int accumulate)
{
    int64_t correct = 0;
    for (int64_t r = 0; r < n; r++) {
        int64_t target = row_argmax(targets + r * k, k);
        correct += strictly_larger(pred + r * k, k, pred[r * k + target]) < top_k;
    }
    store(out, (double)correct, accumulate);
}
