// Fused scaled dot-product attention (the contract of attention_forward in backends/base.py).
// Layouts: q (B, Tq, H, D), k (B, Tk, H, D), v (B, Tk, H, Dv), out (B, Tq, H, Dv),
// probs (B, H, Tq, Tk), mask (B, Tq, Tk) read only when has_mask, dropout (B, H, Tq, Tk)
// read only when has_dropout. One work-item per (b, h, query) row for the scores, softmax,
// weighted sum and dq; one per (b, h, key) for dk and dv, which sum over the query rows
// (no atomics: each key's gradient is written by one work-item).

#define ROW_INDEX(b, i, h, heads, t) ((((b) * (t)) + (i)) * (heads) + (h))

static int allowed_key(__global const float *mask, const int has_mask, const int causal, const int b,
                       const int i, const int j, const int tq, const int tk)
{
    return !(causal && j > i) && !(has_mask && mask[((b * tq) + i) * tk + j] == 0.0f);
}

// probs row = softmax of the allowed scaled scores (uniform when none is allowed); out row =
// probs (* dropout) @ v
__kernel void attention_forward(__global float *out, __global float *probs, __global const float *q,
                                __global const float *k, __global const float *v,
                                __global const float *mask, __global const float *dropout,
                                const float scale, const int causal, const int has_mask,
                                const int has_dropout, const int batch, const int tq, const int tk,
                                const int heads, const int dim, const int dim_v)
{
    const int row = get_global_id(0);   // (b, h, i)
    if (row >= batch * heads * tq) return;
    const int i = row % tq, h = (row / tq) % heads, b = row / (tq * heads);
    __global float *p = probs + (size_t)row * tk;
    __global const float *qi = q + (size_t)ROW_INDEX(b, i, h, heads, tq) * dim;
    // keys past the causal limit are never read: their probabilities are 0
    const int limit = causal && i + 1 < tk ? i + 1 : tk;
    float top = -INFINITY;
    for (int j = limit; j < tk; j++) p[j] = -INFINITY;
    for (int j = 0; j < limit; j++) {
        float s = -INFINITY;
        if (allowed_key(mask, has_mask, causal, b, i, j, tq, tk)) {
            __global const float *kj = k + (size_t)ROW_INDEX(b, j, h, heads, tk) * dim;
            s = 0.0f;
            for (int d = 0; d < dim; d++) s += qi[d] * kj[d];
            s *= scale;
            top = fmax(top, s);
        }
        p[j] = s;
    }
    float total = 0.0f;
    for (int j = 0; j < tk; j++) {
        // top == -inf: no key is allowed, the row is uniform over all tk keys
        const float e = top == -INFINITY ? 1.0f : (p[j] == -INFINITY ? 0.0f : exp(p[j] - top));
        p[j] = e;
        total += e;
    }
    for (int j = 0; j < tk; j++) p[j] /= total;
    __global float *oi = out + (size_t)ROW_INDEX(b, i, h, heads, tq) * dim_v;
    __global const float *drop = dropout + (size_t)row * tk;
    // keys outer, features inner: each value row is read contiguously
    for (int d = 0; d < dim_v; d++) oi[d] = 0.0f;
    const int used = top == -INFINITY ? tk : limit;
    for (int j = 0; j < used; j++) {
        const float w = p[j] * (has_dropout ? drop[j] : 1.0f);
        __global const float *vj = v + (size_t)ROW_INDEX(b, j, h, heads, tk) * dim_v;
        for (int d = 0; d < dim_v; d++) oi[d] += w * vj[d];
    }
}

// ds row = scale * d(scores) of query row (b, h, i) (a row that attends nothing is uniform, and
// its scores get the softmax gradient of that, as Keras's additive -1e9 mask gives);
// dq row = ds row @ k
__kernel void attention_backward_rows(__global float *ds, __global float *dq, __global const float *dout,
                                      __global const float *q, __global const float *k,
                                      __global const float *v, __global const float *probs,
                                      __global const float *mask, __global const float *dropout,
                                      const float scale, const int causal, const int has_mask,
                                      const int has_dropout, const int batch, const int tq, const int tk,
                                      const int heads, const int dim, const int dim_v)
{
    const int row = get_global_id(0);
    if (row >= batch * heads * tq) return;
    const int i = row % tq, h = (row / tq) % heads, b = row / (tq * heads);
    __global const float *p = probs + (size_t)row * tk, *drop = dropout + (size_t)row * tk;
    __global const float *go = dout + (size_t)ROW_INDEX(b, i, h, heads, tq) * dim_v;
    __global float *g = ds + (size_t)row * tk;
    // a row with allowed keys has p = 0 past the causal limit (an empty row is uniform over all)
    const int limit = causal && i + 1 < tk && p[tk - 1] == 0.0f ? i + 1 : tk;
    float dot = 0.0f;
    for (int j = limit; j < tk; j++) g[j] = 0.0f;
    for (int j = 0; j < limit; j++) {
        __global const float *vj = v + (size_t)ROW_INDEX(b, j, h, heads, tk) * dim_v;
        float s = 0.0f;
        for (int d = 0; d < dim_v; d++) s += go[d] * vj[d];
        if (has_dropout) s *= drop[j];
        g[j] = s;
        dot += s * p[j];
    }
    for (int j = 0; j < limit; j++) g[j] = scale * p[j] * (g[j] - dot);   // masked keys: p = 0
    __global float *dqi = dq + (size_t)ROW_INDEX(b, i, h, heads, tq) * dim;
    for (int d = 0; d < dim; d++) dqi[d] = 0.0f;
    for (int j = 0; j < limit; j++) {
        __global const float *kj = k + (size_t)ROW_INDEX(b, j, h, heads, tk) * dim;
        for (int d = 0; d < dim; d++) dqi[d] += g[j] * kj[d];
    }
}

// dk row (b, j, h) = ds^T @ q and dv row = (probs * dropout)^T @ dout, over the query rows
__kernel void attention_backward_keys(__global float *dk, __global float *dv, __global const float *ds,
                                      __global const float *dout, __global const float *q,
                                      __global const float *probs, __global const float *dropout,
                                      const int has_dropout, const int batch, const int tq, const int tk,
                                      const int heads, const int dim, const int dim_v)
{
    const int key = get_global_id(0);   // (b, h, j)
    if (key >= batch * heads * tk) return;
    const int j = key % tk, h = (key / tk) % heads, b = key / (tk * heads);
    const size_t base = (size_t)(b * heads + h) * tq * tk + j;   // probs[b, h, 0, j]
    __global float *dkj = dk + (size_t)ROW_INDEX(b, j, h, heads, tk) * dim;
    __global float *dvj = dv + (size_t)ROW_INDEX(b, j, h, heads, tk) * dim_v;
    // queries outer, features inner: each q / dout row is read contiguously; ds and probs are 0
    // wherever key j was not attended, so those rows add nothing
    for (int d = 0; d < dim; d++) dkj[d] = 0.0f;
    for (int d = 0; d < dim_v; d++) dvj[d] = 0.0f;
    for (int i = 0; i < tq; i++) {
        const size_t at = base + (size_t)i * tk;
        const float gs = ds[at], w = probs[at] * (has_dropout ? dropout[at] : 1.0f);
        if (gs == 0.0f && w == 0.0f) continue;
        __global const float *qi = q + (size_t)ROW_INDEX(b, i, h, heads, tq) * dim;
        __global const float *go = dout + (size_t)ROW_INDEX(b, i, h, heads, tq) * dim_v;
        for (int d = 0; d < dim; d++) dkj[d] += gs * qi[d];
        for (int d = 0; d < dim_v; d++) dvj[d] += w * go[d];
    }
}
