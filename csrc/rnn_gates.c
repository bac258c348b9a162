/* LSTM and GRU gate kernels: the plain C reference rows, and the public entry points that
 * split a step's batch over threads and pick the vector rows (rnn_gates_avx2.c / _avx512.c)
 * for tanh with sigmoid. See rnn_gates.h for the shapes and formulas. */
#include <math.h>

#include "cpu_features.h"
#include "rnn_gates.h"
#include "status.h"
#include "internal/activation_scalar.h"
#include "internal/parallel.h"
#include "internal/rnn_gates_kernels.h"
#include "internal/vector_kernels.h"

static int gate_activation_ok(int kind)
{
    return kind == MINIDL_ACT_LINEAR || kind == MINIDL_ACT_RELU || kind == MINIDL_ACT_SIGMOID ||
           kind == MINIDL_ACT_TANH || kind == MINIDL_ACT_HARD_SIGMOID;
}

static float gate_act(float x, int kind)
{
    switch (kind) {
    case MINIDL_ACT_RELU: return x > 0.0f ? x : (x != x ? x : 0.0f);
    case MINIDL_ACT_SIGMOID: return act_sigmoid_s(x);
    case MINIDL_ACT_TANH: return tanhf(x);
    case MINIDL_ACT_HARD_SIGMOID: return act_clip_s(x / 6.0f + 0.5f, 0.0f, 1.0f);
    default: return x;
    }
}

/* f'(x) written with y = f(x): every gate activation's derivative follows from its output. */
static float gate_act_grad(float y, int kind)
{
    switch (kind) {
    case MINIDL_ACT_RELU: return y > 0.0f ? 1.0f : 0.0f;
    case MINIDL_ACT_SIGMOID: return y * (1.0f - y);
    case MINIDL_ACT_TANH: return 1.0f - y * y;
    case MINIDL_ACT_HARD_SIGMOID: return (y > 0.0f && y < 1.0f) ? 1.0f / 6.0f : 0.0f;
    default: return 1.0f;
    }
}

static void lstm_forward_rows(float *h, float *c, float *gates, const float *c_prev, int act,
                              int ract, int64_t rows, int64_t u)
{
    for (int64_t r = 0; r < rows; r++) {
        float *g = gates + r * 4 * u;
        for (int64_t j = 0; j < u; j++) {
            float i = gate_act(g[j], ract), f = gate_act(g[u + j], ract);
            float cand = gate_act(g[2 * u + j], act), o = gate_act(g[3 * u + j], ract);
            float cn = f * c_prev[r * u + j] + i * cand;
            g[j] = i, g[u + j] = f, g[2 * u + j] = cand, g[3 * u + j] = o;
            c[r * u + j] = cn;
            h[r * u + j] = o * gate_act(cn, act);
        }
    }
}

static void lstm_backward_rows(float *dgates, float *dc_prev, const float *dh, const float *dc,
                               const float *gates, const float *c, const float *c_prev, int act,
                               int ract, int64_t rows, int64_t u)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *g = gates + r * 4 * u;
        float *dg = dgates + r * 4 * u;
        for (int64_t j = 0; j < u; j++) {
            int64_t k = r * u + j;
            float i = g[j], f = g[u + j], cand = g[2 * u + j], o = g[3 * u + j];
            float a = gate_act(c[k], act);
            float dck = (dc ? dc[k] : 0.0f) + dh[k] * o * gate_act_grad(a, act);
            dg[j] = dck * cand * gate_act_grad(i, ract);
            dg[u + j] = dck * c_prev[k] * gate_act_grad(f, ract);
            dg[2 * u + j] = dck * i * gate_act_grad(cand, act);
            dg[3 * u + j] = dh[k] * a * gate_act_grad(o, ract);
            dc_prev[k] = dck * f;
        }
    }
}

static void gru_forward_rows(float *h, float *gates, const float *rec, const float *h_prev, int act,
                             int ract, int64_t rows, int64_t u)
{
    for (int64_t r = 0; r < rows; r++) {
        float *g = gates + r * 3 * u;
        const float *q = rec + r * 3 * u;
        for (int64_t j = 0; j < u; j++) {
            float z = gate_act(g[j] + q[j], ract), rr = gate_act(g[u + j] + q[u + j], ract);
            float hh = gate_act(g[2 * u + j] + rr * q[2 * u + j], act);
            g[j] = z, g[u + j] = rr, g[2 * u + j] = hh;
            h[r * u + j] = z * h_prev[r * u + j] + (1.0f - z) * hh;
        }
    }
}

static void gru_backward_rows(float *dgates, float *drec, float *dh_prev, const float *dh,
                              const float *gates, const float *rec, const float *h_prev, int act,
                              int ract, int64_t rows, int64_t u)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *g = gates + r * 3 * u, *q = rec + r * 3 * u;
        float *dg = dgates + r * 3 * u, *dq = drec + r * 3 * u;
        for (int64_t j = 0; j < u; j++) {
            int64_t k = r * u + j;
            float z = g[j], rr = g[u + j], hh = g[2 * u + j];
            float da = dh[k] * (1.0f - z) * gate_act_grad(hh, act);
            float dz = dh[k] * (h_prev[k] - hh) * gate_act_grad(z, ract);
            float dr = da * q[2 * u + j] * gate_act_grad(rr, ract);
            dg[j] = dq[j] = dz;
            dg[u + j] = dq[u + j] = dr;
            dg[2 * u + j] = da;
            dq[2 * u + j] = da * rr;
            dh_prev[k] = dh[k] * z;
        }
    }
}

/* The vector rows for tanh with sigmoid on AVX2 / AVX-512, else NULL (reference rows). */
static const struct rnn_gate_kernels *vector_rows(int act, int ract)
{
    if (act != MINIDL_ACT_TANH || ract != MINIDL_ACT_SIGMOID) return NULL;
    switch (minidl_cpu_isa()) {
    case MINIDL_ISA_AVX512: return minidl_rnn_gate_kernels_avx512();
    case MINIDL_ISA_AVX2: return minidl_rnn_gate_kernels_avx2();
    default: return NULL;
    }
}

/* One block of rows of an LSTM step on the calling thread: the vector rows where they exist,
 * else the reference rows (rnn_gates_kernels.h; rnn_sequence.c runs them inside its own
 * threads). The activations were checked by the caller. */
void rnn_lstm_forward_block(float *h, float *c, float *gates, const float *c_prev, int act, int ract,
                            int64_t rows, int64_t u)
{
    const struct rnn_gate_kernels *vk = vector_rows(act, ract);
    if (vk) vk->lstm_forward(h, c, gates, c_prev, rows, u);
    else lstm_forward_rows(h, c, gates, c_prev, act, ract, rows, u);
}

void rnn_lstm_backward_block(float *dgates, float *dc_prev, const float *dh, const float *dc,
                             const float *gates, const float *c, const float *c_prev, int act, int ract,
                             int64_t rows, int64_t u)
{
    const struct rnn_gate_kernels *vk = vector_rows(act, ract);
    if (vk) vk->lstm_backward(dgates, dc_prev, dh, dc, gates, c, c_prev, rows, u);
    else lstm_backward_rows(dgates, dc_prev, dh, dc, gates, c, c_prev, act, ract, rows, u);
}

void rnn_gru_forward_block(float *h, float *gates, const float *rec, const float *h_prev, int act, int ract,
                           int64_t rows, int64_t u)
{
    const struct rnn_gate_kernels *vk = vector_rows(act, ract);
    if (vk) vk->gru_forward(h, gates, rec, h_prev, rows, u);
    else gru_forward_rows(h, gates, rec, h_prev, act, ract, rows, u);
}

void rnn_gru_backward_block(float *dgates, float *drec, float *dh_prev, const float *dh, const float *gates,
                            const float *rec, const float *h_prev, int act, int ract, int64_t rows, int64_t u)
{
    const struct rnn_gate_kernels *vk = vector_rows(act, ract);
    if (vk) vk->gru_backward(dgates, drec, dh_prev, dh, gates, rec, h_prev, rows, u);
    else gru_backward_rows(dgates, drec, dh_prev, dh, gates, rec, h_prev, act, ract, rows, u);
}

int rnn_gate_activation_ok(int kind)
{
    return gate_activation_ok(kind);
}

/* Row blocks of a step: one per thread when the step is large enough to pay for the fork.
 * A step of LSTM(256) at batch 64 (64 K gate values) takes about 40 us on one Sapphire Rapids
 * core and no less on two, and a parallel region on a busy machine may wait a whole time slice
 * for its second thread: steps are threaded from four times the elementwise threshold. */
#define RNN_PARALLEL_MIN (4 * MINIDL_PARALLEL_MIN)
#define RNN_ROW_BLOCKS(n, u, width) \
    ((n) * (u) * (width) >= RNN_PARALLEL_MIN ? minidl_num_threads() : 1)

int minidl_lstm_gates_forward(float *h, float *c, float *gates, const float *c_prev, int activation,
                              int recurrent_activation, int64_t n, int64_t units)
{
    if (!gate_activation_ok(activation) || !gate_activation_ok(recurrent_activation))
        return MINIDL_INVALID_SIZE;
    const struct rnn_gate_kernels *vk = vector_rows(activation, recurrent_activation);
    int blocks = RNN_ROW_BLOCKS(n, units, 4);
    #pragma omp parallel for schedule(static) num_threads(blocks) if(blocks > 1)
    for (int b = 0; b < blocks; b++) {
        int64_t r0 = n * b / blocks, r1 = n * (b + 1) / blocks;
        float *hb = h + r0 * units, *cb = c + r0 * units, *gb = gates + r0 * 4 * units;
        const float *pb = c_prev + r0 * units;
        if (vk) vk->lstm_forward(hb, cb, gb, pb, r1 - r0, units);
        else lstm_forward_rows(hb, cb, gb, pb, activation, recurrent_activation, r1 - r0, units);
    }
    return MINIDL_OK;
}

int minidl_lstm_gates_backward(float *dgates, float *dc_prev, const float *dh, const float *dc,
                               const float *gates, const float *c, const float *c_prev,
                               int activation, int recurrent_activation, int64_t n, int64_t units)
{
    if (!gate_activation_ok(activation) || !gate_activation_ok(recurrent_activation))
        return MINIDL_INVALID_SIZE;
    const struct rnn_gate_kernels *vk = vector_rows(activation, recurrent_activation);
    int blocks = RNN_ROW_BLOCKS(n, units, 4);
    #pragma omp parallel for schedule(static) num_threads(blocks) if(blocks > 1)
    for (int b = 0; b < blocks; b++) {
        int64_t r0 = n * b / blocks, r1 = n * (b + 1) / blocks, o = r0 * units;
        const float *dcb = dc ? dc + o : NULL;
        if (vk)
            vk->lstm_backward(dgates + 4 * o, dc_prev + o, dh + o, dcb, gates + 4 * o, c + o,
                              c_prev + o, r1 - r0, units);
        else
            lstm_backward_rows(dgates + 4 * o, dc_prev + o, dh + o, dcb, gates + 4 * o, c + o,
                               c_prev + o, activation, recurrent_activation, r1 - r0, units);
    }
    return MINIDL_OK;
}

int minidl_gru_gates_forward(float *h, float *gates, const float *rec, const float *h_prev,
                             int activation, int recurrent_activation, int64_t n, int64_t units)
{
    if (!gate_activation_ok(activation) || !gate_activation_ok(recurrent_activation))
        return MINIDL_INVALID_SIZE;
    const struct rnn_gate_kernels *vk = vector_rows(activation, recurrent_activation);
    int blocks = RNN_ROW_BLOCKS(n, units, 3);
    #pragma omp parallel for schedule(static) num_threads(blocks) if(blocks > 1)
    for (int b = 0; b < blocks; b++) {
        int64_t r0 = n * b / blocks, r1 = n * (b + 1) / blocks, o = r0 * units;
        if (vk) vk->gru_forward(h + o, gates + 3 * o, rec + 3 * o, h_prev + o, r1 - r0, units);
        else gru_forward_rows(h + o, gates + 3 * o, rec + 3 * o, h_prev + o, activation,
                              recurrent_activation, r1 - r0, units);
    }
    return MINIDL_OK;
}

int minidl_gru_gates_backward(float *dgates, float *drec, float *dh_prev, const float *dh,
                              const float *gates, const float *rec, const float *h_prev,
                              int activation, int recurrent_activation, int64_t n, int64_t units)
{
    if (!gate_activation_ok(activation) || !gate_activation_ok(recurrent_activation))
        return MINIDL_INVALID_SIZE;
    const struct rnn_gate_kernels *vk = vector_rows(activation, recurrent_activation);
    int blocks = RNN_ROW_BLOCKS(n, units, 3);
    #pragma omp parallel for schedule(static) num_threads(blocks) if(blocks > 1)
    for (int b = 0; b < blocks; b++) {
        int64_t r0 = n * b / blocks, r1 = n * (b + 1) / blocks, o = r0 * units;
        if (vk)
            vk->gru_backward(dgates + 3 * o, drec + 3 * o, dh_prev + o, dh + o, gates + 3 * o,
                             rec + 3 * o, h_prev + o, r1 - r0, units);
        else
            gru_backward_rows(dgates + 3 * o, drec + 3 * o, dh_prev + o, dh + o, gates + 3 * o,
                              rec + 3 * o, h_prev + o, activation, recurrent_activation, r1 - r0,
                              units);
    }
    return MINIDL_OK;
}
