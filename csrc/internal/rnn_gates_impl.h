/* The vector rows of rnn_gates_kernels.h for tanh with sigmoid, written once in the vf_*
 * primitives; included by rnn_gates_avx2.c and rnn_gates_avx512.c after their simd_*.h.
 * Each row is walked in whole vectors and one masked tail, so nothing reads past a row. */
#ifndef MINIDL_RNN_GATES_IMPL_H
#define MINIDL_RNN_GATES_IMPL_H

#include "rnn_gates_kernels.h"
#include "simd_math.h"

#define RNN_INLINE static inline __attribute__((always_inline))

/* Lanes [j, j + t) of a row: whole vectors use plain loads, the tail masked ones. */
RNN_INLINE vf ld(const float *p, int t)
{
    return t == VF_LANES ? vf_load(p) : vf_load_part(p, t, 0.0f);
}
RNN_INLINE void st(float *p, vf v, int t)
{
    if (t == VF_LANES) vf_store(p, v);
    else vf_store_part(p, v, t);
}

static void lstm_forward(float *h, float *c, float *gates, const float *c_prev, int64_t rows,
                         int64_t u)
{
    for (int64_t r = 0; r < rows; r++) {
        float *g = gates + r * 4 * u;
        for (int64_t j = 0; j < u; j += VF_LANES) {
            int t = u - j < VF_LANES ? (int)(u - j) : VF_LANES;
            vf i = vf_sigmoid(ld(g + j, t)), f = vf_sigmoid(ld(g + u + j, t));
            vf cand = vf_tanh(ld(g + 2 * u + j, t)), o = vf_sigmoid(ld(g + 3 * u + j, t));
            vf cn = vf_fmadd(f, ld(c_prev + r * u + j, t), vf_mul(i, cand));
            st(g + j, i, t), st(g + u + j, f, t);
            st(g + 2 * u + j, cand, t), st(g + 3 * u + j, o, t);
            st(c + r * u + j, cn, t);
            st(h + r * u + j, vf_mul(o, vf_tanh(cn)), t);
        }
    }
}

static void lstm_backward(float *dgates, float *dc_prev, const float *dh, const float *dc,
                          const float *gates, const float *c, const float *c_prev, int64_t rows,
                          int64_t u)
{
    vf one = vf_set1(1.0f);
    for (int64_t r = 0; r < rows; r++) {
        const float *g = gates + r * 4 * u;
        float *dg = dgates + r * 4 * u;
        for (int64_t j = 0; j < u; j += VF_LANES) {
            int t = u - j < VF_LANES ? (int)(u - j) : VF_LANES;
            int64_t k = r * u + j;
            vf i = ld(g + j, t), f = ld(g + u + j, t);
            vf cand = ld(g + 2 * u + j, t), o = ld(g + 3 * u + j, t);
            vf a = vf_tanh(ld(c + k, t)), d = ld(dh + k, t);
            vf dck = vf_mul(vf_mul(d, o), vf_fnmadd(a, a, one));
            if (dc) dck = vf_add(dck, ld(dc + k, t));
            st(dg + j, vf_mul(vf_mul(dck, cand), vf_mul(i, vf_sub(one, i))), t);
            st(dg + u + j, vf_mul(vf_mul(dck, ld(c_prev + k, t)), vf_mul(f, vf_sub(one, f))), t);
            st(dg + 2 * u + j, vf_mul(vf_mul(dck, i), vf_fnmadd(cand, cand, one)), t);
            st(dg + 3 * u + j, vf_mul(vf_mul(d, a), vf_mul(o, vf_sub(one, o))), t);
            st(dc_prev + k, vf_mul(dck, f), t);
        }
    }
}

static void gru_forward(float *h, float *gates, const float *rec, const float *h_prev, int64_t rows,
                        int64_t u)
{
    for (int64_t r = 0; r < rows; r++) {
        float *g = gates + r * 3 * u;
        const float *q = rec + r * 3 * u;
        for (int64_t j = 0; j < u; j += VF_LANES) {
            int t = u - j < VF_LANES ? (int)(u - j) : VF_LANES;
            vf z = vf_sigmoid(vf_add(ld(g + j, t), ld(q + j, t)));
            vf rr = vf_sigmoid(vf_add(ld(g + u + j, t), ld(q + u + j, t)));
            vf hh = vf_tanh(vf_fmadd(rr, ld(q + 2 * u + j, t), ld(g + 2 * u + j, t)));
            st(g + j, z, t), st(g + u + j, rr, t), st(g + 2 * u + j, hh, t);
            /* z h_prev + (1 - z) hh = hh + z (h_prev - hh) */
            st(h + r * u + j, vf_fmadd(z, vf_sub(ld(h_prev + r * u + j, t), hh), hh), t);
        }
    }
}

static void gru_backward(float *dgates, float *drec, float *dh_prev, const float *dh,
                         const float *gates, const float *rec, const float *h_prev, int64_t rows,
                         int64_t u)
{
    vf one = vf_set1(1.0f);
    for (int64_t r = 0; r < rows; r++) {
        const float *g = gates + r * 3 * u, *q = rec + r * 3 * u;
        float *dg = dgates + r * 3 * u, *dq = drec + r * 3 * u;
        for (int64_t j = 0; j < u; j += VF_LANES) {
            int t = u - j < VF_LANES ? (int)(u - j) : VF_LANES;
            int64_t k = r * u + j;
            vf z = ld(g + j, t), rr = ld(g + u + j, t), hh = ld(g + 2 * u + j, t);
            vf d = ld(dh + k, t);
            vf da = vf_mul(vf_mul(d, vf_sub(one, z)), vf_fnmadd(hh, hh, one));
            vf dz = vf_mul(vf_mul(d, vf_sub(ld(h_prev + k, t), hh)), vf_mul(z, vf_sub(one, z)));
            vf dr = vf_mul(vf_mul(da, ld(q + 2 * u + j, t)), vf_mul(rr, vf_sub(one, rr)));
            st(dg + j, dz, t), st(dq + j, dz, t);
            st(dg + u + j, dr, t), st(dq + u + j, dr, t);
            st(dg + 2 * u + j, da, t), st(dq + 2 * u + j, vf_mul(da, rr), t);
            st(dh_prev + k, vf_mul(d, z), t);
        }
    }
}

static const struct rnn_gate_kernels isa_rnn_kernels = {
    .lstm_forward = lstm_forward,
    .lstm_backward = lstm_backward,
    .gru_forward = gru_forward,
    .gru_backward = gru_backward,
};

#endif
