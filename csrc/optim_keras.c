/* Keras 3's Adadelta, Adamax, Nadam, Lion and Ftrl updates, the moving average of the weights
 * (use_ema) and clipping by the global norm. Scalar coefficients in double here; the element
 * loops (internal/optim_keras_kernels.h) are compiled for each instruction set the cpu backend
 * has (generic, AVX2, AVX-512) and picked by minidl_cpu_isa(), then run block by block on
 * OpenMP threads like the other optimizer updates (optim.c). */
#include <math.h>

#include "internal/parallel.h"
#include "optim_keras.h"

/* The tensors and scalars of one update: w and g, up to two state tensors, c[] coefficients
 * (c[0] is the decay factor 1 - lr * weight_decay for the updates), result for reductions. */
struct optim_args {
    float *w;
    const float *g;
    float *s1, *s2;
    float c[8];
    double *result;
    float *s3; /* a third state tensor (AMSGrad's v_hat) */
};

typedef void (*range_kernel)(const struct optim_args *a, int64_t lo, int64_t hi);

struct optim_kernels {
    range_kernel adadelta, adamax, amsgrad, nadam, lion, ftrl, ema, sum_squares, scale;
};

#define KERNEL(name) name##_generic
#include "internal/optim_keras_kernels.h"
#undef KERNEL

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define KERNEL(name) name##_avx2
#include "internal/optim_keras_kernels.h"
#undef KERNEL
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx2,fma")
#define KERNEL(name) name##_avx512
#include "internal/optim_keras_kernels.h"
#undef KERNEL
#pragma GCC pop_options

static const struct optim_kernels *active(void)
{
    switch (minidl_cpu_isa()) {
    case MINIDL_ISA_AVX512: return &table_avx512;
    case MINIDL_ISA_AVX2: return &table_avx2;
    default: return &table_generic;
    }
}

/* Run kernel over n elements: on the calling thread below the threading threshold (a parallel
 * region costs more than the work there), else whole blocks on the OpenMP threads. */
static void run(range_kernel kernel, const struct optim_args *a, int64_t n)
{
    if (n < MINIDL_PARALLEL_MIN) {
        kernel(a, 0, n);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < minidl_blocks(n); b++)
        kernel(a, b * MINIDL_BLOCK, b * MINIDL_BLOCK + minidl_block_len(n, b));
}

static float decay_factor(float lr, float weight_decay)
{
    return (float)(1.0 - (double)lr * (double)weight_decay);
}

void minidl_adadelta_update(float *w, float *acc_grad, float *acc_delta, const float *g, float lr, float rho,
                            float epsilon, float weight_decay, int64_t n)
{
    struct optim_args a = {w, g, acc_grad, acc_delta, {decay_factor(lr, weight_decay), lr, rho, epsilon}, 0};
    run(active()->adadelta, &a, n);
}

void minidl_adamax_update(float *w, float *m, float *u, const float *g, float lr, float lr_t, float beta_1,
                          float beta_2, float epsilon, float weight_decay, int64_t n)
{
    struct optim_args a = {w, g, m, u, {decay_factor(lr, weight_decay), lr_t, beta_1, beta_2, epsilon}, 0};
    run(active()->adamax, &a, n);
}

void minidl_amsgrad_update(float *w, float *m, float *v, float *v_hat, const float *g, float lr, float lr_t,
                           float beta_1, float beta_2, float epsilon, float weight_decay, int64_t n)
{
    struct optim_args a = {w, g, m, v, {decay_factor(lr, weight_decay), lr_t, beta_1, beta_2, epsilon}, 0, v_hat};
    run(active()->amsgrad, &a, n);
}

void minidl_nadam_update(float *w, float *m, float *v, const float *g, float lr, float beta_1, float beta_2,
                         float epsilon, float c_m, float c_g, float v_scale, float weight_decay, int64_t n)
{
    struct optim_args a = {w, g, m, v,
                           {decay_factor(lr, weight_decay), lr, beta_1, beta_2, epsilon, c_m, c_g, v_scale}, 0};
    run(active()->nadam, &a, n);
}

void minidl_lion_update(float *w, float *m, const float *g, float lr, float beta_1, float beta_2,
                        float weight_decay, int64_t n)
{
    struct optim_args a = {w, g, m, 0, {decay_factor(lr, weight_decay), lr, beta_1, beta_2}, 0};
    run(active()->lion, &a, n);
}

void minidl_ftrl_update(float *w, float *acc, float *linear, const float *g, float lr, float lr_power, float l1,
                        float l2, float l2_shrinkage, float weight_decay, int64_t n)
{
    struct optim_args a = {w, g, acc, linear,
                           {decay_factor(lr, weight_decay), lr, -lr_power, l1, l2, l2_shrinkage}, 0};
    run(active()->ftrl, &a, n);
}

void minidl_ema_update(float *average, const float *w, float momentum, int64_t n)
{
    struct optim_args a = {average, w, 0, 0, {momentum}, 0};
    run(active()->ema, &a, n);
}

void minidl_clip_by_global_norm(float **g, float clipnorm, const int64_t *n, int64_t count)
{
    const struct optim_kernels *k = active();
    double squares = 0.0;
    for (int64_t t = 0; t < count; t++) {
        int64_t len = n[t];
#pragma omp parallel for schedule(static) reduction(+ : squares) if (len >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
        for (int64_t b = 0; b < minidl_blocks(len); b++) {
            double part = 0.0;
            struct optim_args a = {0, g[t], 0, 0, {0}, &part};
            k->sum_squares(&a, b * MINIDL_BLOCK, b * MINIDL_BLOCK + minidl_block_len(len, b));
            squares += part;
        }
    }
    double norm = sqrt(squares);
    if (norm <= clipnorm) return; /* the factor would be exactly 1 */
    for (int64_t t = 0; t < count; t++) {
        struct optim_args a = {g[t], 0, 0, 0, {(float)(clipnorm / norm)}, 0};
        run(k->scale, &a, n[t]);
    }
}
