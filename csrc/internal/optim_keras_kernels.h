/* The element loops of optim_keras.c, compiled once per instruction set: optim_keras.c includes
 * this file under `#pragma GCC target(...)` with KERNEL(name) giving each copy its own names.
 * The loops are plain C under `omp simd` (the compiler vectorizes them for the target ISA); each
 * runs over [lo, hi) of the tensors in struct optim_args (see optim_keras.c for c[]). */

static void KERNEL(adadelta)(const struct optim_args *a, int64_t lo, int64_t hi)
{
    float *restrict w = a->w, *restrict ag = a->s1, *restrict ad = a->s2;
    const float *restrict g = a->g;
    const float decay = a->c[0], lr = a->c[1], rho = a->c[2], eps = a->c[3];
#pragma omp simd
    for (int64_t i = lo; i < hi; i++) {
        float gi = g[i];
        float agi = rho * ag[i] + (1.0f - rho) * gi * gi;
        float delta = -(sqrtf(ad[i] + eps) * gi) / sqrtf(agi + eps);
        ag[i] = agi;
        ad[i] = rho * ad[i] + (1.0f - rho) * delta * delta;
        w[i] = w[i] * decay + lr * delta;
    }
}

static void KERNEL(adamax)(const struct optim_args *a, int64_t lo, int64_t hi)
{
    float *restrict w = a->w, *restrict m = a->s1, *restrict u = a->s2;
    const float *restrict g = a->g;
    const float decay = a->c[0], lr_t = a->c[1], b1 = a->c[2], b2 = a->c[3], eps = a->c[4];
#pragma omp simd
    for (int64_t i = lo; i < hi; i++) {
        float gi = g[i], mi = m[i] + (gi - m[i]) * (1.0f - b1);
        float scaled = b2 * u[i], ag = fabsf(gi);
        float ui = ag > scaled ? ag : scaled; /* NaN in scaled stays */
        ui = ag != ag ? ag : ui;               /* NaN in g propagates, as numpy's maximum */
        m[i] = mi;
        u[i] = ui;
        w[i] = w[i] * decay - lr_t * mi / (ui + eps);
    }
}

static void KERNEL(amsgrad)(const struct optim_args *a, int64_t lo, int64_t hi)
{
    float *restrict w = a->w, *restrict m = a->s1, *restrict v = a->s2, *restrict vh = a->s3;
    const float *restrict g = a->g;
    const float decay = a->c[0], lr_t = a->c[1], b1 = a->c[2], b2 = a->c[3], eps = a->c[4];
#pragma omp simd
    for (int64_t i = lo; i < hi; i++) {
        float gi = g[i];
        float mi = b1 * m[i] + (1.0f - b1) * gi;
        float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
        float vhi = vi > vh[i] ? vi : vh[i];
        vhi = vi != vi ? vi : vhi; /* NaN in v or v_hat propagates, as numpy's maximum */
        m[i] = mi;
        v[i] = vi;
        vh[i] = vhi;
        w[i] = w[i] * decay - lr_t * mi / (sqrtf(vhi) + eps);
    }
}

static void KERNEL(nadam)(const struct optim_args *a, int64_t lo, int64_t hi)
{
    float *restrict w = a->w, *restrict m = a->s1, *restrict v = a->s2;
    const float *restrict g = a->g;
    const float decay = a->c[0], lr = a->c[1], b1 = a->c[2], b2 = a->c[3], eps = a->c[4];
    const float c_m = a->c[5], c_g = a->c[6], v_scale = a->c[7];
#pragma omp simd
    for (int64_t i = lo; i < hi; i++) {
        float gi = g[i];
        float mi = m[i] + (gi - m[i]) * (1.0f - b1);
        float vi = v[i] + (gi * gi - v[i]) * (1.0f - b2);
        m[i] = mi;
        v[i] = vi;
        w[i] = w[i] * decay - lr * (c_m * mi + c_g * gi) / (sqrtf(vi * v_scale) + eps);
    }
}

static void KERNEL(lion)(const struct optim_args *a, int64_t lo, int64_t hi)
{
    float *restrict w = a->w, *restrict m = a->s1;
    const float *restrict g = a->g;
    const float decay = a->c[0], lr = a->c[1], b1 = a->c[2], b2 = a->c[3];
#pragma omp simd
    for (int64_t i = lo; i < hi; i++) {
        float gi = g[i], mi = m[i];
        float d = b1 * mi + (1.0f - b1) * gi;
        float s = d > 0.0f ? 1.0f : (d < 0.0f ? -1.0f : d); /* sign, NaN stays NaN */
        w[i] = w[i] * decay - lr * s;
        m[i] = b2 * mi + (1.0f - b2) * gi;
    }
}

/* power = -lr_power; sqrt when it is 0.5 (the default), powf otherwise */
#define FTRL_BODY(POW)                                                                   \
    for (int64_t i = lo; i < hi; i++) {                                                  \
        float gi = g[i], wi = w[i] * decay, acci = acc[i];                               \
        float new_acc = acci + gi * gi, p_new = POW(new_acc), p_old = POW(acci);         \
        float li = lin[i] + (gi + shrink2 * wi) - (p_new - p_old) / lr * wi;             \
        float quadratic = p_new / lr + 2.0f * l2;                                        \
        float clipped = li < -l1 ? -l1 : (li > l1 ? l1 : li);                            \
        lin[i] = li;                                                                     \
        w[i] = (clipped - li) / quadratic;                                               \
        acc[i] = new_acc;                                                                \
    }

static void KERNEL(ftrl)(const struct optim_args *a, int64_t lo, int64_t hi)
{
    float *restrict w = a->w, *restrict acc = a->s1, *restrict lin = a->s2;
    const float *restrict g = a->g;
    const float decay = a->c[0], lr = a->c[1], power = a->c[2], l1 = a->c[3], l2 = a->c[4];
    const float shrink2 = 2.0f * a->c[5];
#define FTRL_POW(x) powf((x), power)
    if (power == 0.5f) {
#pragma omp simd
        FTRL_BODY(sqrtf)
    } else {
        FTRL_BODY(FTRL_POW)
    }
#undef FTRL_POW
}
#undef FTRL_BODY

static void KERNEL(ema)(const struct optim_args *a, int64_t lo, int64_t hi)
{
    float *restrict avg = a->w;
    const float *restrict w = a->g;
    const float momentum = a->c[0];
#pragma omp simd
    for (int64_t i = lo; i < hi; i++) avg[i] = momentum * avg[i] + (1.0f - momentum) * w[i];
}

static void KERNEL(sum_squares)(const struct optim_args *a, int64_t lo, int64_t hi)
{
    const float *restrict g = a->g;
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = lo; i < hi; i++) s += (double)g[i] * (double)g[i];
    *a->result += s;
}

static void KERNEL(scale)(const struct optim_args *a, int64_t lo, int64_t hi)
{
    float *restrict g = a->w;
    const float factor = a->c[0];
#pragma omp simd
    for (int64_t i = lo; i < hi; i++) g[i] *= factor;
}

static const struct optim_kernels KERNEL(table) = {
    .adadelta = KERNEL(adadelta), .adamax = KERNEL(adamax), .amsgrad = KERNEL(amsgrad), .nadam = KERNEL(nadam), .lion = KERNEL(lion),
    .ftrl = KERNEL(ftrl), .ema = KERNEL(ema), .sum_squares = KERNEL(sum_squares), .scale = KERNEL(scale),
};
