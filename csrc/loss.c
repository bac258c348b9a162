/* Losses: the fused softmax uses the vector softmax kernel; the rest is plain C with libm
 * (log per element), threaded over rows when the scores are large. */
#include <math.h>
#include <string.h>

#include "internal/parallel.h"
#include "internal/targets.h"
#include "internal/vector_kernels.h"
#include "loss.h"

#define CLIP_EPSILON 1e-7f /* Keras' backend.epsilon() */

/* probs = softmax(logits) row by row and loss[r] = log(sum(exp(logits[r]))) */
static void softmax_with_lse(float *probs, float *lse, const float *logits, int64_t n, int64_t k)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    int64_t step = minidl_rows_per_block(k);
#pragma omp parallel for schedule(static) if (n * k >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t r0 = 0; r0 < n; r0 += step) {
        int64_t nr = n - r0 < step ? n - r0 : step;
        vk->softmax_rows(probs + r0 * k, lse + r0, logits + r0 * k, nr, k);
    }
}

int minidl_softmax_cross_entropy_forward_sparse(float *probs, float *loss, const float *logits,
                                           const int32_t *targets, int64_t n, int64_t k)
{
    if (targets_out_of_range(targets, n, k)) return MINIDL_TARGET_OUT_OF_RANGE;
    softmax_with_lse(probs, loss, logits, n, k);
    for (int64_t r = 0; r < n; r++) loss[r] -= logits[r * k + targets[r]];
    return MINIDL_OK;
}

void minidl_softmax_cross_entropy_forward_dense(float *probs, float *loss, const float *logits, const float *targets,
                                       int64_t n, int64_t k)
{
    softmax_with_lse(probs, loss, logits, n, k);
    /* -sum t (x - lse) = lse * sum t - sum t x */
#pragma omp parallel for schedule(static) if (n * k >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < n; r++) {
        double tsum = 0.0, tx = 0.0;
        for (int64_t j = 0; j < k; j++) {
            tsum += targets[r * k + j];
            tx += (double)targets[r * k + j] * logits[r * k + j];
        }
        loss[r] = (float)(loss[r] * tsum - tx);
    }
}

int minidl_softmax_cross_entropy_backward_sparse(float *dlogits, const float *probs, const int32_t *targets,
                                            float scale, int64_t n, int64_t k)
{
    if (targets_out_of_range(targets, n, k)) return MINIDL_TARGET_OUT_OF_RANGE;
    for (int64_t r = 0; r < n; r++) {
        for (int64_t j = 0; j < k; j++) dlogits[r * k + j] = probs[r * k + j] * scale;
        dlogits[r * k + targets[r]] = (probs[r * k + targets[r]] - 1.0f) * scale;
    }
    return MINIDL_OK;
}

void minidl_softmax_cross_entropy_backward_dense(float *dlogits, const float *probs, const float *targets,
                                        float scale, int64_t n, int64_t k)
{
    for (int64_t i = 0; i < n * k; i++) dlogits[i] = (probs[i] - targets[i]) * scale;
}

void minidl_sigmoid_cross_entropy_forward(float *probs, float *loss, const float *logits, const float *targets,
                                 int64_t n, int64_t k)
{
#pragma omp parallel for schedule(static) if (n * k >= MINIDL_PARALLEL_MIN / 4) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < n; r++) {
        double total = 0.0;
        for (int64_t j = 0; j < k; j++) {
            float x = logits[r * k + j], t = targets[r * k + j];
            float e = expf(-fabsf(x));
            total += (x > 0.0f ? x : 0.0f) - x * t + log1pf(e);
            probs[r * k + j] = x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
        }
        loss[r] = k > 0 ? (float)(total / (double)k) : 0.0f;
    }
}

void minidl_sigmoid_cross_entropy_backward(float *dlogits, const float *probs, const float *targets, float scale,
                                  int64_t n, int64_t k)
{
    float s = k > 0 ? scale / (float)k : 0.0f;
    for (int64_t i = 0; i < n * k; i++) dlogits[i] = (probs[i] - targets[i]) * s;
}

static float clip_prob(float p)
{
    return p < CLIP_EPSILON ? CLIP_EPSILON : (p > 1.0f - CLIP_EPSILON ? 1.0f - CLIP_EPSILON : p);
}

int minidl_cross_entropy_forward_sparse(float *loss, const float *probs, const int32_t *targets, int64_t n,
                                   int64_t k)
{
    if (targets_out_of_range(targets, n, k)) return MINIDL_TARGET_OUT_OF_RANGE;
    for (int64_t r = 0; r < n; r++) loss[r] = -logf(clip_prob(probs[r * k + targets[r]]));
    return MINIDL_OK;
}

void minidl_cross_entropy_forward_dense(float *loss, const float *probs, const float *targets, int64_t n, int64_t k)
{
#pragma omp parallel for schedule(static) if (n * k >= MINIDL_PARALLEL_MIN / 4) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < n; r++) {
        double total = 0.0;
        for (int64_t j = 0; j < k; j++) total -= targets[r * k + j] * logf(clip_prob(probs[r * k + j]));
        loss[r] = (float)total;
    }
}

void minidl_binary_cross_entropy_forward(float *loss, const float *probs, const float *targets, int64_t n, int64_t k)
{
#pragma omp parallel for schedule(static) if (n * k >= MINIDL_PARALLEL_MIN / 4) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < n; r++) {
        double total = 0.0;
        for (int64_t j = 0; j < k; j++) {
            float p = clip_prob(probs[r * k + j]), t = targets[r * k + j];
            total -= t * logf(p) + (1.0f - t) * logf(1.0f - p);
        }
        loss[r] = k > 0 ? (float)(total / (double)k) : 0.0f;
    }
}

/* True where the clip leaves p unchanged (the gradient of the clip passes there). */
static int unclipped(float p)
{
    return p == clip_prob(p);
}

int minidl_cross_entropy_backward_sparse(float *dprobs, const float *probs, const int32_t *targets, float scale,
                                    int64_t n, int64_t k)
{
    if (targets_out_of_range(targets, n, k)) return MINIDL_TARGET_OUT_OF_RANGE;
    memset(dprobs, 0, (size_t)(n * k) * sizeof(float));
    for (int64_t r = 0; r < n; r++) {
        float p = probs[r * k + targets[r]];
        dprobs[r * k + targets[r]] = unclipped(p) ? -scale / p : 0.0f;
    }
    return MINIDL_OK;
}

void minidl_cross_entropy_backward_dense(float *dprobs, const float *probs, const float *targets, float scale,
                                int64_t n, int64_t k)
{
    for (int64_t i = 0; i < n * k; i++)
        dprobs[i] = unclipped(probs[i]) ? -targets[i] / probs[i] * scale : 0.0f;
}

void minidl_binary_cross_entropy_backward(float *dprobs, const float *probs, const float *targets, float scale,
                                 int64_t n, int64_t k)
{
    float s = k > 0 ? scale / (float)k : 0.0f;
    for (int64_t i = 0; i < n * k; i++) {
        float p = probs[i], t = targets[i];
        dprobs[i] = unclipped(p) ? (-(t / p) + (1.0f - t) / (1.0f - p)) * s : 0.0f;
    }
}

void minidl_mean_squared_error_forward(float *loss, const float *pred, const float *targets, int64_t n, int64_t k)
{
    for (int64_t r = 0; r < n; r++) {
        double total = 0.0;
        for (int64_t j = 0; j < k; j++) {
            float d = pred[r * k + j] - targets[r * k + j];
            total += d * d;
        }
        loss[r] = k > 0 ? (float)(total / (double)k) : 0.0f;
    }
}

void minidl_mean_squared_error_backward(float *dpred, const float *pred, const float *targets, float scale, int64_t n,
                         int64_t k)
{
    float s = k > 0 ? 2.0f * scale / (float)k : 0.0f;
    for (int64_t i = 0; i < n * k; i++) dpred[i] = (pred[i] - targets[i]) * s;
}
