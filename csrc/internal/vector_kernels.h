/* The table of vectorizable inner kernels, one instance per instruction set.
 *
 * Each kernel works serially on one contiguous range; the public ops (elementwise.c,
 * batchnorm.c, loss.c, optim.c) split tensors into ranges, run them on OpenMP threads and
 * pick the table of the instruction set minidl_cpu_isa() reports. The generic table is plain
 * C (vector_kernels_generic.c) and is the reference the vector tables are tested against;
 * the AVX2 and AVX-512 tables compile one source, vector_kernels_impl.h, for each ISA.
 *
 * Shapes: n is an element count; (rows, c) is a row-major matrix whose last axis has c
 * elements, with per-column vectors (bias, mean, scale ...) of length c.
 */
#ifndef MINIDL_VECTOR_KERNELS_H
#define MINIDL_VECTOR_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Activation ids shared with minidl/backends/cpu/backend.py. */
enum minidl_activation {
    MINIDL_ACT_LINEAR = 0,
    MINIDL_ACT_RELU = 1,
    MINIDL_ACT_LEAKY_RELU = 2,
    MINIDL_ACT_SIGMOID = 3,
    MINIDL_ACT_TANH = 4,
    MINIDL_ACT_SOFTMAX = 5,
    MINIDL_ACT_GELU = 6,             /* 0.5 x (1 + erf(x / sqrt 2)) */
    MINIDL_ACT_GELU_TANH = 7,        /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    MINIDL_ACT_SILU = 8,             /* x sigmoid(x) */
    MINIDL_ACT_ELU = 9,              /* x > 0 ? x : alpha (e^x - 1) */
    MINIDL_ACT_SELU = 10,            /* scale * elu(x) with Keras's fixed alpha and scale */
    MINIDL_ACT_SOFTPLUS = 11,        /* log(1 + e^x) */
    MINIDL_ACT_SOFTSIGN = 12,        /* x / (1 + |x|) */
    MINIDL_ACT_HARD_SIGMOID = 13,    /* clip(x / 6 + 1/2, 0, 1) */
    MINIDL_ACT_HARD_SILU = 14,       /* x hard_sigmoid(x) */
    MINIDL_ACT_MISH = 15,            /* x tanh(softplus(x)) */
    MINIDL_ACT_EXPONENTIAL = 16,     /* e^x */
    MINIDL_ACT_RELU6 = 17,           /* clip(x, 0, 6) */
};

/* Keras's selu constants. */
#define MINIDL_SELU_ALPHA 1.6732632423543772848170429916717f
#define MINIDL_SELU_SCALE 1.0507009873554804934193349852946f
/* True for the kinds whose backward reads the forward input x. */
#define MINIDL_ACT_NEEDS_INPUT(kind) \
    ((kind) == MINIDL_ACT_GELU || (kind) == MINIDL_ACT_GELU_TANH || (kind) == MINIDL_ACT_SILU || \
     (kind) == MINIDL_ACT_ELU || (kind) == MINIDL_ACT_SOFTPLUS || (kind) == MINIDL_ACT_HARD_SILU || \
     (kind) == MINIDL_ACT_MISH)

struct vector_kernels {
    const char *isa;

    /* ---- elementwise; out may alias the inputs */
    void (*add)(float *out, const float *a, const float *b, int64_t n);
    void (*axpby)(float *out, float alpha, const float *x, float beta, const float *y, int64_t n);
    void (*multiply)(float *out, const float *a, const float *b, int64_t n);
    void (*scale)(float *x, float s, int64_t n);
    /* out (rows, c) = x + bias (c) */
    void (*bias_add)(float *out, const float *x, const float *bias, int64_t rows, int64_t c);

    /* ---- activations of elementwise kinds (not softmax); out / dx may alias x / dout */
    void (*activation_forward)(float *out, const float *x, int kind, float alpha, int64_t n);
    /* x is the forward input, read only by MINIDL_ACT_NEEDS_INPUT kinds (NULL otherwise) */
    void (*activation_backward)(float *dx, const float *dout, const float *y, const float *x, int kind,
                                float alpha, int64_t n);
    /* out (rows, c) = softmax of each row of x; when lse is not NULL, lse[r] = log(sum(exp(x[r]))) */
    void (*softmax_rows)(float *out, float *lse, const float *x, int64_t rows, int64_t c);
    /* dx (rows, c) = y * (dout - sum(dout * y)) row by row */
    void (*softmax_backward_rows)(float *dx, const float *dout, const float *y, int64_t rows, int64_t c);

    /* ---- column reductions (acc has c entries and is added to) and per-column affine maps */
    void (*col_sum)(float *acc, const float *x, int64_t rows, int64_t c);
    /* acc += (x - mean)^2 */
    void (*col_sq_dev)(float *acc, const float *x, const float *mean, int64_t rows, int64_t c);
    /* acc += dy * (x - mean) */
    void (*col_dot_dev)(float *acc, const float *dy, const float *x, const float *mean, int64_t rows,
                        int64_t c);
    /* out = x * scale + shift */
    void (*rows_scale_shift)(float *out, const float *x, const float *scale, const float *shift,
                             int64_t rows, int64_t c);
    /* out = a * ka + b * kb + shift (batchnorm backward) */
    void (*rows_affine2)(float *out, const float *a, const float *ka, const float *b, const float *kb,
                         const float *shift, int64_t rows, int64_t c);

    /* ---- pooling: where x (c) beats best (c) in numpy's argmax order (larger, or NaN while
     * best is not): best = x and arg = index */
    void (*max_update)(float *best, int32_t *arg, const float *x, int32_t index, int64_t c);

    /* ---- dropout on whole blocks of 64 elements (dropout.c defines the layout of the random
     * words); out, mask and x point at element 0 of the tensor */
    void (*dropout_blocks)(float *out, float *mask, const float *x, uint32_t threshold, float keep_scale,
                           uint64_t seed, int64_t first_block, int64_t blocks);

    /* ---- whole-tensor reductions */
    float (*sum)(const float *x, int64_t n);
    float (*sum_squares)(const float *x, int64_t n);
    int (*all_finite)(const float *x, int64_t n);

    /* ---- optimizer updates, the updated tensors (w, then the state) before g (optim.h);
     * w -= lr_wd * w (lr_wd = lr * weight_decay, 0 for none) before the step, as numpy does */
    void (*clip_value)(float *g, float clipvalue, int64_t n);
    void (*sgd)(float *w, const float *g, float lr, float lr_wd, int64_t n);
    void (*sgd_momentum)(float *w, float *velocity, const float *g, float lr, float momentum, int nesterov,
                         float lr_wd, int64_t n);
    /* lr_t = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) */
    void (*adam)(float *w, float *m, float *v, const float *g, float lr_t, float beta_1, float beta_2,
                 float epsilon, float lr_wd, int64_t n);
    /* mom is NULL when momentum is 0 */
    void (*rmsprop)(float *w, float *ms, float *mom, const float *g, float lr, float rho, float momentum,
                    float epsilon, float lr_wd, int64_t n);
    void (*adagrad)(float *w, float *acc, const float *g, float lr, float epsilon, float lr_wd, int64_t n);
};

const struct vector_kernels *minidl_vector_kernels_generic(void);
const struct vector_kernels *minidl_vector_kernels_avx2(void);
const struct vector_kernels *minidl_vector_kernels_avx512(void);

/* The table of the instruction set minidl_cpu_isa() (cpu_features.h) selects now. */
const struct vector_kernels *minidl_active_kernels(void);

#endif
