/* Keras 3's row losses (MAE, MAPE, MSLE, Huber, log-cosh, Poisson, KL divergence, hinge,
 * squared hinge, categorical hinge, cosine similarity) and their gradients. Rows go to the
 * OpenMP threads; within a row the element loop is plain C with the kind fixed for the whole
 * call, so the compiler's loop unswitching leaves one branch-free loop per kind. Sums are
 * accumulated in double. Formulas: minidl/backends/numpy_ops/losses.py (the reference). */
#include <math.h>

#include "internal/parallel.h"
#include "row_loss.h"

#define EPS 1e-7f

enum minidl_row_loss {
    MAE, MAPE, MSLE, HUBER, LOG_COSH, POISSON, KLD, HINGE, SQUARED_HINGE, CATEGORICAL_HINGE, COSINE
};

static inline float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
static inline float signf(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); } /* NaN stays */

/* max that keeps a NaN from either side, as numpy's maximum (fmaxf would drop it) */
static inline float maxf(float a, float b) { return (a > b || a != a) ? a : b; }
static inline double maxd(double a, double b) { return (a > b || a != a) ? a : b; }

static inline float softplus(float x) { return maxf(x, 0.0f) + log1pf(expf(-fabsf(x))); }

/* The value of one element (the element kinds) */
static inline float element_value(int kind, float p, float t, float delta)
{
    float e = p - t, a;
    switch (kind) {
    case MAE: return fabsf(e);
    case MAPE: return 100.0f * fabsf(e) / maxf(fabsf(t), EPS);
    case MSLE: a = logf(maxf(p, EPS) + 1.0f) - logf(maxf(t, EPS) + 1.0f); return a * a;
    case HUBER: a = fabsf(e); return a <= delta ? 0.5f * e * e : delta * a - 0.5f * delta * delta;
    case LOG_COSH: return e + softplus(-2.0f * e) - 0.69314718055994531f;
    case POISSON: return p - t * logf(p + EPS);
    case KLD: t = clampf(t, EPS, 1.0f); return t * logf(t / clampf(p, EPS, 1.0f));
    case HINGE: return maxf(1.0f - t * p, 0.0f);
    default: a = maxf(1.0f - t * p, 0.0f); return a * a; /* SQUARED_HINGE */
    }
}

/* Its derivative with respect to p */
static inline float element_grad(int kind, float p, float t, float delta)
{
    float e = p - t;
    switch (kind) {
    case MAE: return signf(e);
    case MAPE: return 100.0f * signf(e) / maxf(fabsf(t), EPS);
    case MSLE:
        return p > EPS ? 2.0f * (logf(maxf(p, EPS) + 1.0f) - logf(maxf(t, EPS) + 1.0f)) / (p + 1.0f) : 0.0f;
    case HUBER: return fabsf(e) <= delta ? e : delta * signf(e);
    case LOG_COSH: return tanhf(e);
    case POISSON: return 1.0f - t / (p + EPS);
    case KLD: return (p >= EPS && p <= 1.0f) ? -clampf(t, EPS, 1.0f) / clampf(p, EPS, 1.0f) : 0.0f;
    case HINGE: return 1.0f - t * p > 0.0f ? -t : 0.0f;
    default: return -2.0f * t * maxf(1.0f - t * p, 0.0f); /* SQUARED_HINGE */
    }
}

static double sum_squares(const float *x, int64_t k)
{
    double s = 0.0;
    for (int64_t j = 0; j < k; j++) s += (double)x[j] * x[j];
    return s;
}

/* Categorical hinge of one row: neg - pos + 1, and the first column where neg is reached */
static double categorical_margin(const float *p, const float *t, int64_t k, int64_t *argmax)
{
    double pos = 0.0;
    float neg = -INFINITY;
    *argmax = 0;
    for (int64_t j = 0; j < k; j++) {
        float s = (1.0f - t[j]) * p[j];
        pos += (double)t[j] * p[j];
        if (s > neg || (s != s && neg == neg)) { neg = s; *argmax = j; }
    }
    return (double)neg - pos + 1.0;
}

static float row_value(int kind, const float *p, const float *t, int64_t k, float delta)
{
    if (kind == CATEGORICAL_HINGE) {
        int64_t j;
        double m = categorical_margin(p, t, k, &j);
        return m > 0.0 || m != m ? (float)m : 0.0f;
    }
    if (kind == COSINE) {
        double nt = maxd(sqrt(sum_squares(t, k)), EPS), np_ = maxd(sqrt(sum_squares(p, k)), EPS), dot = 0.0;
        for (int64_t j = 0; j < k; j++) dot += (double)t[j] * p[j];
        return (float)(-dot / (nt * np_));
    }
    double s = 0.0;
    for (int64_t j = 0; j < k; j++) s += element_value(kind, p[j], t[j], delta);
    return (float)(kind == KLD ? s : s / (double)k);
}

static void row_grad(float *d, int kind, const float *p, const float *t, int64_t k, float delta, float scale)
{
    if (kind == CATEGORICAL_HINGE) {
        int64_t argmax;
        double m = categorical_margin(p, t, k, &argmax);
        int active = m > 0.0; /* NaN: no gradient, as the reference's where() */
        for (int64_t j = 0; j < k; j++)
            d[j] = active ? scale * (-t[j] + (j == argmax ? 1.0f - t[j] : 0.0f)) : 0.0f;
        return;
    }
    if (kind == COSINE) {
        double raw = sqrt(sum_squares(p, k)), nt = maxd(sqrt(sum_squares(t, k)), EPS), np_ = maxd(raw, EPS);
        double dot = 0.0;
        for (int64_t j = 0; j < k; j++) dot += (double)t[j] * p[j];
        double cosine = dot / (nt * np_);
        for (int64_t j = 0; j < k; j++) {
            double a = t[j] / nt, b = p[j] / np_;
            d[j] = (float)(scale * (raw > EPS ? -(a - cosine * b) / np_ : -a / EPS));
        }
        return;
    }
    float factor = kind == KLD ? scale : scale / (float)k;
    for (int64_t j = 0; j < k; j++) d[j] = factor * element_grad(kind, p[j], t[j], delta);
}

void minidl_row_loss_forward(float *loss, const float *pred, const float *targets, int kind, float delta,
                             int64_t rows, int64_t k)
{
#pragma omp parallel for schedule(static) if (rows * k >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < rows; r++) loss[r] = row_value(kind, pred + r * k, targets + r * k, k, delta);
}

void minidl_row_loss_backward(float *dpred, const float *pred, const float *targets, int kind, float delta,
                              float scale, int64_t rows, int64_t k)
{
#pragma omp parallel for schedule(static) if (rows * k >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t r = 0; r < rows; r++)
        row_grad(dpred + r * k, kind, pred + r * k, targets + r * k, k, delta, scale);
}
