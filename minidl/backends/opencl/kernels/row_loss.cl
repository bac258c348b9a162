// Keras 3's row losses of (rows, k) predictions against dense targets, and their gradients:
// one work-item per row (the categorical hinge and the cosine similarity need the whole row;
// the element kinds reduce over it). `kind` is the position in base.py's ROW_LOSSES.
// Formulas: minidl/backends/numpy_ops/losses.py (the reference).

#define EPS 1e-7f
#define MAE 0
#define MAPE 1
#define MSLE 2
#define HUBER 3
#define LOG_COSH 4
#define POISSON 5
#define KLD 6
#define HINGE 7
#define SQUARED_HINGE 8
#define CATEGORICAL_HINGE 9
#define COSINE 10

// max_nan and clip_nan (common.cl) keep NaN, as numpy; so does this sign
inline float sign_nan(const float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); }

inline float element_value(const int kind, const float p, float t, const float delta)
{
    const float e = p - t;
    float a;
    switch (kind) {
    case MAE: return fabs(e);
    case MAPE: return 100.0f * fabs(e) / max_nan(fabs(t), EPS);
    case MSLE: a = log(max_nan(p, EPS) + 1.0f) - log(max_nan(t, EPS) + 1.0f); return a * a;
    case HUBER: a = fabs(e); return a <= delta ? 0.5f * e * e : delta * a - 0.5f * delta * delta;
    case LOG_COSH: a = -2.0f * e; return e + max_nan(a, 0.0f) + log1p(exp(-fabs(a))) - 0.69314718055994531f;
    case POISSON: return p - t * log(p + EPS);
    case KLD: t = clip_nan(t, EPS, 1.0f); return t * log(t / clip_nan(p, EPS, 1.0f));
    case HINGE: return max_nan(1.0f - t * p, 0.0f);
    default: a = max_nan(1.0f - t * p, 0.0f); return a * a;
    }
}

inline float element_grad(const int kind, const float p, const float t, const float delta)
{
    const float e = p - t;
    switch (kind) {
    case MAE: return sign_nan(e);
    case MAPE: return 100.0f * sign_nan(e) / max_nan(fabs(t), EPS);
    case MSLE:
        return p > EPS ? 2.0f * (log(max_nan(p, EPS) + 1.0f) - log(max_nan(t, EPS) + 1.0f)) / (p + 1.0f) : 0.0f;
    case HUBER: return fabs(e) <= delta ? e : delta * sign_nan(e);
    case LOG_COSH: return tanh(e);
    case POISSON: return 1.0f - t / (p + EPS);
    case KLD: return (p >= EPS && p <= 1.0f) ? -clip_nan(t, EPS, 1.0f) / clip_nan(p, EPS, 1.0f) : 0.0f;
    case HINGE: return 1.0f - t * p > 0.0f ? -t : 0.0f;
    default: return -2.0f * t * max_nan(1.0f - t * p, 0.0f);
    }
}

// neg - pos + 1 of the categorical hinge, and the first column where neg is reached
inline float categorical_margin(__global const float *p, __global const float *t, const int k, int *argmax)
{
    float pos = 0.0f, neg = -INFINITY;
    *argmax = 0;
    for (int j = 0; j < k; ++j) {
        const float s = (1.0f - t[j]) * p[j];
        pos += t[j] * p[j];
        if (s > neg || (is_nan(s) && !is_nan(neg))) { neg = s; *argmax = j; }
    }
    return neg - pos + 1.0f;
}

// (the norm of t floored at EPS, the norm of p, the dot product t.p)
inline float3 cosine_parts(__global const float *p, __global const float *t, const int k)
{
    float tt = 0.0f, pp = 0.0f, tp = 0.0f;
    for (int j = 0; j < k; ++j) {
        tt += t[j] * t[j];
        pp += p[j] * p[j];
        tp += t[j] * p[j];
    }
    return (float3)(max_nan(sqrt(tt), EPS), sqrt(pp), tp);
}

__kernel void row_loss_forward(__global float *loss, __global const float *pred,
                               __global const float *targets, const int rows, const int k,
                               const int kind, const float delta)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    __global const float *p = pred + (long)r * k, *t = targets + (long)r * k;
    if (kind == CATEGORICAL_HINGE) {
        int argmax;
        loss[r] = max_nan(categorical_margin(p, t, k, &argmax), 0.0f);
        return;
    }
    if (kind == COSINE) {
        const float3 c = cosine_parts(p, t, k);
        loss[r] = -c.z / (c.x * max_nan(c.y, EPS));
        return;
    }
    float s = 0.0f;
    for (int j = 0; j < k; ++j) s += element_value(kind, p[j], t[j], delta);
    loss[r] = kind == KLD ? s : s / (float)k;
}

__kernel void row_loss_backward(__global float *dpred, __global const float *pred,
                                __global const float *targets, const int rows, const int k,
                                const int kind, const float delta, const float scale)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    __global const float *p = pred + (long)r * k, *t = targets + (long)r * k;
    __global float *d = dpred + (long)r * k;
    if (kind == CATEGORICAL_HINGE) {
        int argmax;
        const int active = categorical_margin(p, t, k, &argmax) > 0.0f;
        for (int j = 0; j < k; ++j)
            d[j] = active ? scale * (-t[j] + (j == argmax ? 1.0f - t[j] : 0.0f)) : 0.0f;
        return;
    }
    if (kind == COSINE) {
        const float3 c = cosine_parts(p, t, k);
        const float np = max_nan(c.y, EPS), cosine = c.z / (c.x * np);
        for (int j = 0; j < k; ++j) {
            const float a = t[j] / c.x, b = p[j] / np;
            d[j] = scale * (c.y > EPS ? -(a - cosine * b) / np : -a / EPS);
        }
        return;
    }
    const float factor = kind == KLD ? scale : scale / (float)k;
    for (int j = 0; j < k; ++j) d[j] = factor * element_grad(kind, p[j], t[j], delta);
}
