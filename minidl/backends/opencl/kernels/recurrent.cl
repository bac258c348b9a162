// The fused LSTM / GRU gate kernels of one time step (minidl/backends/base.py's
// lstm_gates_* / gru_gates_*): one work-item per (row, unit), reading that unit's gates from
// the row's (k u) pre-activations and writing them back activated, so a step touches its gate
// rows once. The formulas are those of minidl/backends/numpy_ops/recurrent.py.
//
// Activation codes are positions in minidl/activations.py's ACTIVATIONS; the gate kernels
// take linear (0), relu (1), sigmoid (3), tanh (4) and hard_sigmoid (13), whose derivatives
// follow from their outputs (the backend refuses the others before launching).

#define GATE_LINEAR 0
#define GATE_RELU 1
#define GATE_SIGMOID 3
#define GATE_TANH 4
#define GATE_HARD_SIGMOID 13

float gate_act(const float x, const int code)
{
    switch (code) {
    case GATE_RELU: return x > 0.0f ? x : (x != x ? x : 0.0f);
    case GATE_SIGMOID: {
        if (x >= 0.0f) return 1.0f / (1.0f + exp(-x));   // never exponentiates a large x
        const float e = exp(x);
        return e / (1.0f + e);
    }
    case GATE_TANH: return tanh(x);
    case GATE_HARD_SIGMOID: return clip_nan(x / 6.0f + 0.5f, 0.0f, 1.0f);
    default: return x;
    }
}

// f'(x) from y = f(x)
float gate_grad(const float y, const int code)
{
    switch (code) {
    case GATE_RELU: return y > 0.0f ? 1.0f : 0.0f;
    case GATE_SIGMOID: return y * (1.0f - y);
    case GATE_TANH: return 1.0f - y * y;
    case GATE_HARD_SIGMOID: return (y > 0.0f && y < 1.0f) ? 1.0f / 6.0f : 0.0f;
    default: return 1.0f;
    }
}

// gates (n, 4u): pre-activations in, activated i, f, g, o out; c = f c_prev + i g; h = o act(c)
__kernel void lstm_gates_forward(__global float *h, __global float *c, __global float *gates,
                                 __global const float *c_prev, const int act, const int ract,
                                 const int n, const int u)
{
    const int k = get_global_id(0);
    if (k >= n * u) return;
    const int r = k / u, j = k - r * u;
    __global float *g = gates + (size_t)r * 4 * u;
    const float i = gate_act(g[j], ract), f = gate_act(g[u + j], ract);
    const float cand = gate_act(g[2 * u + j], act), o = gate_act(g[3 * u + j], ract);
    const float cn = f * c_prev[k] + i * cand;
    g[j] = i; g[u + j] = f; g[2 * u + j] = cand; g[3 * u + j] = o;
    c[k] = cn;
    h[k] = o * gate_act(cn, act);
}

// has_dc 0: dc is not read (zero). dc_prev may alias dc (each work-item reads its dc first).
__kernel void lstm_gates_backward(__global float *dgates, __global float *dc_prev,
                                  __global const float *dh, __global const float *dc,
                                  const int has_dc,
                                  __global const float *gates, __global const float *c,
                                  __global const float *c_prev, const int act, const int ract,
                                  const int n, const int u)
{
    const int k = get_global_id(0);
    if (k >= n * u) return;
    const int r = k / u, j = k - r * u;
    __global const float *g = gates + (size_t)r * 4 * u;
    __global float *dg = dgates + (size_t)r * 4 * u;
    const float i = g[j], f = g[u + j], cand = g[2 * u + j], o = g[3 * u + j];
    const float a = gate_act(c[k], act);
    const float dck = (has_dc ? dc[k] : 0.0f) + dh[k] * o * gate_grad(a, act);
    dg[j] = dck * cand * gate_grad(i, ract);
    dg[u + j] = dck * c_prev[k] * gate_grad(f, ract);
    dg[2 * u + j] = dck * i * gate_grad(cand, act);
    dg[3 * u + j] = dh[k] * a * gate_grad(o, ract);
    dc_prev[k] = dck * f;
}

// gates (n, 3u): x W + b_input in, activated z, r, hh out; rec (n, 3u) = h_prev U + b_recurrent
__kernel void gru_gates_forward(__global float *h, __global float *gates, __global const float *rec,
                                __global const float *h_prev, const int act, const int ract,
                                const int n, const int u)
{
    const int k = get_global_id(0);
    if (k >= n * u) return;
    const int r = k / u, j = k - r * u;
    __global float *g = gates + (size_t)r * 3 * u;
    __global const float *q = rec + (size_t)r * 3 * u;
    const float z = gate_act(g[j] + q[j], ract), rr = gate_act(g[u + j] + q[u + j], ract);
    const float hh = gate_act(g[2 * u + j] + rr * q[2 * u + j], act);
    g[j] = z; g[u + j] = rr; g[2 * u + j] = hh;
    h[k] = z * h_prev[k] + (1.0f - z) * hh;
}

// dh_prev may alias dh (each work-item reads its dh first)
__kernel void gru_gates_backward(__global float *dgates, __global float *drec,
                                 __global float *dh_prev,
                                 __global const float *dh, __global const float *gates,
                                 __global const float *rec, __global const float *h_prev,
                                 const int act, const int ract, const int n, const int u)
{
    const int k = get_global_id(0);
    if (k >= n * u) return;
    const int r = k / u, j = k - r * u;
    __global const float *g = gates + (size_t)r * 3 * u, *q = rec + (size_t)r * 3 * u;
    __global float *dg = dgates + (size_t)r * 3 * u, *dq = drec + (size_t)r * 3 * u;
    const float z = g[j], rr = g[u + j], hh = g[2 * u + j], d = dh[k];
    const float da = d * (1.0f - z) * gate_grad(hh, act);
    const float dz = d * (h_prev[k] - hh) * gate_grad(z, ract);
    const float dr = da * q[2 * u + j] * gate_grad(rr, ract);
    dg[j] = dz; dq[j] = dz;
    dg[u + j] = dr; dq[u + j] = dr;
    dg[2 * u + j] = da;
    dq[2 * u + j] = da * rr;
    dh_prev[k] = d * z;
}
