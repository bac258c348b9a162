/* The optimizer kernels of struct vector_kernels, written once in the vf_* primitives.
 *
 * Included by vector_kernels_impl.h (after its load_lanes / store_lanes); like it, everything
 * here is static. Each optimizer is one call of opt_loop with a constant `kind`, so the switch
 * in opt_step folds away and every optimizer compiles to its own straight-line vector loop.
 */
#ifndef MINIDL_VECTOR_KERNELS_OPTIM_H
#define MINIDL_VECTOR_KERNELS_OPTIM_H

enum opt_kind { OPT_SGD, OPT_SGD_MOMENTUM, OPT_ADAM, OPT_RMSPROP, OPT_RMSPROP_MOMENTUM, OPT_ADAGRAD };

/* The hyperparameters broadcast to vectors once per call. k1 and k2 mean, per kind:
 * sgd with momentum: momentum, -; adam: beta_1, beta_2; rmsprop: rho, momentum. */
struct opt_args {
    vf lr, k1, k2, eps, lr_wd;
    int decay;    /* 0 without weight decay, where the decay step is skipped as numpy skips it */
    int nesterov; /* sgd with momentum only */
};

ALWAYS_INLINE struct opt_args opt_args(float lr, float k1, float k2, float eps, float lr_wd, int nesterov)
{
    struct opt_args p = {vf_set1(lr), vf_set1(k1), vf_set1(k2), vf_set1(eps), vf_set1(lr_wd),
                         lr_wd != 0.0f, nesterov};
    return p;
}

/* numpy's decoupled weight decay, w -= (lr * weight_decay) * w, which turns an infinite w into NaN. */
ALWAYS_INLINE vf decayed(vf w, vf lr_wd, int on)
{
    return on ? vf_fnmadd(lr_wd, w, w) : w;
}

/* One step on the `lanes` elements at i of w and its state s1, s2 (those the kind keeps). */
ALWAYS_INLINE void opt_step(int kind, float *w, float *s1, float *s2, const float *g, int64_t i, int lanes,
                            const struct opt_args *p)
{
    vf one = vf_set1(1.0f);
    vf gi = load_lanes(g + i, lanes);
    vf wi = decayed(load_lanes(w + i, lanes), p->lr_wd, p->decay);
    switch (kind) {
    case OPT_SGD: wi = vf_fnmadd(p->lr, gi, wi); break;
    case OPT_SGD_MOMENTUM: { /* s1: velocity */
        vf vel = vf_fnmadd(p->lr, gi, vf_mul(p->k1, load_lanes(s1 + i, lanes)));
        store_lanes(s1 + i, vel, lanes);
        wi = vf_add(wi, p->nesterov ? vf_fnmadd(p->lr, gi, vf_mul(p->k1, vel)) : vel);
        break;
    }
    case OPT_ADAM: { /* s1: m, s2: v; p->lr is the bias-corrected lr_t */
        vf mi = vf_fmadd(p->k1, load_lanes(s1 + i, lanes), vf_mul(vf_sub(one, p->k1), gi));
        vf vi = vf_fmadd(p->k2, load_lanes(s2 + i, lanes), vf_mul(vf_mul(vf_sub(one, p->k2), gi), gi));
        store_lanes(s1 + i, mi, lanes);
        store_lanes(s2 + i, vi, lanes);
        wi = vf_sub(wi, vf_div(vf_mul(p->lr, mi), vf_add(vf_sqrt(vi), p->eps)));
        break;
    }
    case OPT_RMSPROP:
    case OPT_RMSPROP_MOMENTUM: { /* s1: mean square, s2: momentum */
        vf si = vf_fmadd(p->k1, load_lanes(s1 + i, lanes), vf_mul(vf_mul(vf_sub(one, p->k1), gi), gi));
        vf inc = vf_div(vf_mul(p->lr, gi), vf_sqrt(vf_add(si, p->eps)));
        store_lanes(s1 + i, si, lanes);
        if (kind == OPT_RMSPROP_MOMENTUM) {
            inc = vf_fmadd(p->k2, load_lanes(s2 + i, lanes), inc);
            store_lanes(s2 + i, inc, lanes);
        }
        wi = vf_sub(wi, inc);
        break;
    }
    case OPT_ADAGRAD: { /* s1: accumulator */
        vf ai = vf_fmadd(gi, gi, load_lanes(s1 + i, lanes));
        store_lanes(s1 + i, ai, lanes);
        wi = vf_sub(wi, vf_div(vf_mul(p->lr, gi), vf_sqrt(vf_add(ai, p->eps))));
        break;
    }
    }
    store_lanes(w + i, wi, lanes);
}

ALWAYS_INLINE void opt_loop(int kind, float *w, float *s1, float *s2, const float *g, struct opt_args p,
                            int64_t n)
{
    int64_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) opt_step(kind, w, s1, s2, g, i, VF_LANES, &p);
    if (i < n) opt_step(kind, w, s1, s2, g, i, (int)(n - i), &p);
}

static void clip_value(float *g, float clipvalue, int64_t n)
{
    vf hi = vf_set1(clipvalue), lo = vf_set1(-clipvalue);
    int64_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) vf_store(g + i, vf_clamp(vf_load(g + i), lo, hi));
    if (i < n) {
        int t = (int)(n - i);
        vf_store_part(g + i, vf_clamp(vf_load_part(g + i, t, 0.0f), lo, hi), t);
    }
}

static void sgd(float *w, const float *g, float lr, float lr_wd, int64_t n)
{
    opt_loop(OPT_SGD, w, NULL, NULL, g, opt_args(lr, 0.0f, 0.0f, 0.0f, lr_wd, 0), n);
}

static void sgd_momentum(float *w, float *velocity, const float *g, float lr, float momentum, int nesterov,
                         float lr_wd, int64_t n)
{
    opt_loop(OPT_SGD_MOMENTUM, w, velocity, NULL, g, opt_args(lr, momentum, 0.0f, 0.0f, lr_wd, nesterov), n);
}

static void adam(float *w, float *m, float *v, const float *g, float lr_t, float beta_1, float beta_2,
                 float epsilon, float lr_wd, int64_t n)
{
    opt_loop(OPT_ADAM, w, m, v, g, opt_args(lr_t, beta_1, beta_2, epsilon, lr_wd, 0), n);
}

static void rmsprop(float *w, float *ms, float *mom, const float *g, float lr, float rho, float momentum,
                    float epsilon, float lr_wd, int64_t n)
{
    struct opt_args p = opt_args(lr, rho, momentum, epsilon, lr_wd, 0);
    if (mom)
        opt_loop(OPT_RMSPROP_MOMENTUM, w, ms, mom, g, p, n);
    else
        opt_loop(OPT_RMSPROP, w, ms, NULL, g, p, n);
}

static void adagrad(float *w, float *acc, const float *g, float lr, float epsilon, float lr_wd, int64_t n)
{
    opt_loop(OPT_ADAGRAD, w, acc, NULL, g, opt_args(lr, 0.0f, 0.0f, epsilon, lr_wd, 0), n);
}

#endif
