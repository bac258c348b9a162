/* Optimizer updates: scalar coefficients in double here, the per-element work in the vector
 * kernels, block by block on OpenMP threads. */
#include <math.h>

#include "internal/parallel.h"
#include "internal/vector_kernels.h"
#include "optim.h"

/* lr * weight_decay: the kernels' decoupled weight decay is w -= lr_wd * w */
static float decay_factor(float lr, float weight_decay)
{
    return (float)((double)lr * (double)weight_decay);
}

void minidl_clip_by_value(float *g, float clipvalue, int64_t n)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    if (n < MINIDL_PARALLEL_MIN) {
        vk->clip_value(g, clipvalue, n);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < minidl_blocks(n); b++)
        vk->clip_value(g + b * MINIDL_BLOCK, clipvalue, minidl_block_len(n, b));
}

void minidl_clip_by_norm(float *g, float clipnorm, int64_t n)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    double squares = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : squares) if (n >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < minidl_blocks(n); b++)
        squares += vk->sum_squares(g + b * MINIDL_BLOCK, minidl_block_len(n, b));
    double norm = sqrt(squares);
    if (norm <= clipnorm) return; /* the factor would be exactly 1 */
    float factor = (float)(clipnorm / norm);
#pragma omp parallel for schedule(static) if (n >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < minidl_blocks(n); b++)
        vk->scale(g + b * MINIDL_BLOCK, factor, minidl_block_len(n, b));
}

void minidl_sgd_update(float *w, float *velocity, const float *g, float lr, float momentum, int nesterov,
                       float weight_decay, int64_t n)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    float lr_wd = decay_factor(lr, weight_decay);
    if (n < MINIDL_PARALLEL_MIN) {
        if (velocity)
            vk->sgd_momentum(w, velocity, g, lr, momentum, nesterov, lr_wd, n);
        else
            vk->sgd(w, g, lr, lr_wd, n);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < minidl_blocks(n); b++) {
        int64_t lo = b * MINIDL_BLOCK, len = minidl_block_len(n, b);
        if (velocity)
            vk->sgd_momentum(w + lo, velocity + lo, g + lo, lr, momentum, nesterov, lr_wd, len);
        else
            vk->sgd(w + lo, g + lo, lr, lr_wd, len);
    }
}

void minidl_adam_update(float *w, float *m, float *v, const float *g, float lr, float lr_t, float beta_1,
                        float beta_2, float epsilon, float weight_decay, int64_t n)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    float lr_wd = decay_factor(lr, weight_decay);
    if (n < MINIDL_PARALLEL_MIN) {
        vk->adam(w, m, v, g, lr_t, beta_1, beta_2, epsilon, lr_wd, n);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < minidl_blocks(n); b++) {
        int64_t lo = b * MINIDL_BLOCK;
        vk->adam(w + lo, m + lo, v + lo, g + lo, lr_t, beta_1, beta_2, epsilon, lr_wd, minidl_block_len(n, b));
    }
}

void minidl_rmsprop_update(float *w, float *ms, float *mom, const float *g, float lr, float rho,
                           float momentum, float epsilon, float weight_decay, int64_t n)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    float lr_wd = decay_factor(lr, weight_decay);
    if (n < MINIDL_PARALLEL_MIN) {
        vk->rmsprop(w, ms, mom, g, lr, rho, momentum, epsilon, lr_wd, n);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < minidl_blocks(n); b++) {
        int64_t lo = b * MINIDL_BLOCK;
        vk->rmsprop(w + lo, ms + lo, mom ? mom + lo : NULL, g + lo, lr, rho, momentum, epsilon, lr_wd,
                    minidl_block_len(n, b));
    }
}

void minidl_adagrad_update(float *w, float *acc, const float *g, float lr, float epsilon, float weight_decay,
                           int64_t n)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    float lr_wd = decay_factor(lr, weight_decay);
    if (n < MINIDL_PARALLEL_MIN) {
        vk->adagrad(w, acc, g, lr, epsilon, lr_wd, n);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < minidl_blocks(n); b++) {
        int64_t lo = b * MINIDL_BLOCK;
        vk->adagrad(w + lo, acc + lo, g + lo, lr, epsilon, lr_wd, minidl_block_len(n, b));
    }
}
