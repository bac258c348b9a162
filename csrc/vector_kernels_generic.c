/* Plain C kernels: the fallback on any CPU and the reference the AVX2 / AVX-512 tables are
 * tested against. Written for clarity; the compiler vectorizes what it can at baseline flags. */
#include <math.h>
#include <string.h>

#include "internal/activation_scalar.h"
#include "internal/philox.h"
#include "internal/vector_kernels.h"

static void add(float *out, const float *a, const float *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

static void axpby(float *out, float alpha, const float *x, float beta, const float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) out[i] = alpha * x[i] + beta * y[i];
}

static void multiply(float *out, const float *a, const float *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++) out[i] = a[i] * b[i];
}

static void scale(float *x, float s, int64_t n)
{
    for (int64_t i = 0; i < n; i++) x[i] *= s;
}

static void bias_add(float *out, const float *x, const float *bias, int64_t rows, int64_t c)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < c; j++) out[r * c + j] = x[r * c + j] + bias[j];
}

/* One loop per kind, so that each loop is branch-free and the compiler can vectorize it. */
static void activation_forward(float *out, const float *x, int kind, float alpha, int64_t n)
{
    switch (kind) {
    case MINIDL_ACT_RELU:
        for (int64_t i = 0; i < n; i++) out[i] = x[i] < 0.0f ? 0.0f : x[i]; /* NaN passes through */
        break;
    case MINIDL_ACT_LEAKY_RELU:
        for (int64_t i = 0; i < n; i++) out[i] = x[i] > 0.0f ? x[i] : alpha * x[i];
        break;
    case MINIDL_ACT_SIGMOID:
        for (int64_t i = 0; i < n; i++) out[i] = 1.0f / (1.0f + expf(-x[i]));
        break;
    case MINIDL_ACT_TANH:
        for (int64_t i = 0; i < n; i++) out[i] = tanhf(x[i]);
        break;
    case MINIDL_ACT_LINEAR:
        for (int64_t i = 0; i < n; i++) out[i] = x[i];
        break;
    default:
        for (int64_t i = 0; i < n; i++) out[i] = activate_scalar(x[i], kind, alpha);
        break;
    }
}

/* The derivative expressed through the forward output y. */
static void activation_backward(float *dx, const float *dout, const float *y, const float *x, int kind,
                                float alpha, int64_t n)
{
    switch (kind) {
    case MINIDL_ACT_RELU:
        for (int64_t i = 0; i < n; i++) {
            float d = dout[i]; /* loaded unconditionally, so the select vectorizes */
            dx[i] = y[i] > 0.0f ? d : 0.0f;
        }
        break;
    case MINIDL_ACT_LEAKY_RELU:
        for (int64_t i = 0; i < n; i++) {
            float d = dout[i];
            dx[i] = y[i] > 0.0f ? d : alpha * d;
        }
        break;
    case MINIDL_ACT_SIGMOID:
        for (int64_t i = 0; i < n; i++) dx[i] = dout[i] * y[i] * (1.0f - y[i]);
        break;
    case MINIDL_ACT_TANH:
        for (int64_t i = 0; i < n; i++) dx[i] = dout[i] * (1.0f - y[i] * y[i]);
        break;
    case MINIDL_ACT_LINEAR:
        for (int64_t i = 0; i < n; i++) dx[i] = dout[i];
        break;
    default: /* x is NULL for the kinds that do not read it */
        for (int64_t i = 0; i < n; i++) dx[i] = dout[i] * activate_grad_scalar(x ? x[i] : 0.0f, y[i], kind, alpha);
        break;
    }
}

static void softmax_rows(float *out, float *lse, const float *x, int64_t rows, int64_t c)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * c;
        float *outr = out + r * c;
        float mx = -INFINITY;
        for (int64_t j = 0; j < c; j++) mx = xr[j] > mx ? xr[j] : mx;
        float total = 0.0f;
        for (int64_t j = 0; j < c; j++) {
            outr[j] = expf(xr[j] - mx);
            total += outr[j];
        }
        float inv = 1.0f / total;
        for (int64_t j = 0; j < c; j++) outr[j] *= inv;
        if (lse) lse[r] = mx + logf(total);
    }
}

static void softmax_backward_rows(float *dx, const float *dout, const float *y, int64_t rows, int64_t c)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *dr = dout + r * c, *yr = y + r * c;
        float dot = 0.0f;
        for (int64_t j = 0; j < c; j++) dot += dr[j] * yr[j];
        for (int64_t j = 0; j < c; j++) dx[r * c + j] = yr[j] * (dr[j] - dot);
    }
}

static void col_sum(float *acc, const float *x, int64_t rows, int64_t c)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < c; j++) acc[j] += x[r * c + j];
}

static void col_sq_dev(float *acc, const float *x, const float *mean, int64_t rows, int64_t c)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < c; j++) {
            float d = x[r * c + j] - mean[j];
            acc[j] += d * d;
        }
}

static void col_dot_dev(float *acc, const float *dy, const float *x, const float *mean, int64_t rows,
                        int64_t c)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < c; j++) acc[j] += dy[r * c + j] * (x[r * c + j] - mean[j]);
}

static void rows_scale_shift(float *out, const float *x, const float *scale_, const float *shift,
                             int64_t rows, int64_t c)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < c; j++) out[r * c + j] = x[r * c + j] * scale_[j] + shift[j];
}

static void rows_affine2(float *out, const float *a, const float *ka, const float *b, const float *kb,
                         const float *shift, int64_t rows, int64_t c)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < c; j++)
            out[r * c + j] = a[r * c + j] * ka[j] + b[r * c + j] * kb[j] + shift[j];
}

static void max_update(float *best, int32_t *arg, const float *x, int32_t index, int64_t c)
{
    for (int64_t j = 0; j < c; j++) { /* numpy's argmax order: NaN beats every number, the first one wins */
        float v = x[j], b = best[j];
        int32_t a = arg[j];
        int take = b == b && !(v <= b);
        best[j] = take ? v : b;
        arg[j] = take ? index : a;
    }
}

static void dropout_blocks(float *out, float *mask, const float *x, uint32_t threshold, float keep_scale,
                           uint64_t seed, int64_t first_block, int64_t blocks)
{
    for (int64_t b = first_block; b < first_block + blocks; b++)
        philox_dropout_block(out, mask, x, threshold, keep_scale, seed, b, b * 64, b * 64 + 64);
}

static float sum(const float *x, int64_t n)
{
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++) s += x[i];
    return s;
}

static float sum_squares(const float *x, int64_t n)
{
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++) s += x[i] * x[i];
    return s;
}

/* An exponent of all ones is inf or NaN. No early exit, so that the compiler vectorizes the
 * loop (the caller hands it one block at a time); the exiting loop ran scalar, and its speed
 * swung by 60% with the code's alignment. */
static int all_finite(const float *x, int64_t n)
{
    uint32_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, x + i, sizeof bits);
        bad |= (bits & 0x7f800000u) == 0x7f800000u;
    }
    return !bad;
}

static void clip_value(float *g, float clipvalue, int64_t n)
{
    for (int64_t i = 0; i < n; i++) /* NaN passes through, as in numpy */
        g[i] = g[i] < -clipvalue ? -clipvalue : (g[i] > clipvalue ? clipvalue : g[i]);
}

/* numpy's decoupled weight decay, w -= (lr * weight_decay) * w (an infinite w becomes NaN),
 * skipped without weight decay (lr_wd == 0) as numpy skips it. */
static inline float decayed(float w, float lr_wd)
{
    return lr_wd != 0.0f ? w - lr_wd * w : w;
}

static void sgd(float *w, const float *g, float lr, float lr_wd, int64_t n)
{
    for (int64_t i = 0; i < n; i++) w[i] = decayed(w[i], lr_wd) - lr * g[i];
}

static void sgd_momentum(float *w, float *velocity, const float *g, float lr, float momentum, int nesterov,
                         float lr_wd, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float v = momentum * velocity[i] - lr * g[i];
        velocity[i] = v;
        w[i] = decayed(w[i], lr_wd) + (nesterov ? momentum * v - lr * g[i] : v);
    }
}

static void adam(float *w, float *m, float *v, const float *g, float lr_t, float beta_1, float beta_2,
                 float epsilon, float lr_wd, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        m[i] = beta_1 * m[i] + (1.0f - beta_1) * g[i];
        v[i] = beta_2 * v[i] + (1.0f - beta_2) * g[i] * g[i];
        w[i] = decayed(w[i], lr_wd) - lr_t * m[i] / (sqrtf(v[i]) + epsilon);
    }
}

static void rmsprop(float *w, float *ms, float *mom, const float *g, float lr, float rho, float momentum,
                    float epsilon, float lr_wd, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        ms[i] = rho * ms[i] + (1.0f - rho) * g[i] * g[i];
        float inc = lr * g[i] / sqrtf(ms[i] + epsilon);
        if (mom) {
            mom[i] = momentum * mom[i] + inc;
            inc = mom[i];
        }
        w[i] = decayed(w[i], lr_wd) - inc;
    }
}

static void adagrad(float *w, float *acc, const float *g, float lr, float epsilon, float lr_wd, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        acc[i] += g[i] * g[i];
        w[i] = decayed(w[i], lr_wd) - lr * g[i] / sqrtf(acc[i] + epsilon);
    }
}

#define ISA_NAME "generic"
#include "internal/vector_kernels_table.h"

const struct vector_kernels *minidl_vector_kernels_generic(void) { return &isa_kernels; }
