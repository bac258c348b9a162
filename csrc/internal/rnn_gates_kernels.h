/* Row kernels of rnn_gates.c, one table per instruction set (as vector_kernels.h).
 *
 * Each kernel works on `rows` consecutive rows of one step; rnn_gates.c splits the batch over
 * OpenMP threads. The vector tables cover tanh with sigmoid only; rnn_gates.c sends every
 * other pair, and the generic ISA, to the plain C reference rows (the twin the tests compare
 * the vector rows with). Shapes as in rnn_gates.h, u = units.
 */
#ifndef MINIDL_RNN_GATES_KERNELS_H
#define MINIDL_RNN_GATES_KERNELS_H

#include <stdint.h>

struct rnn_gate_kernels {
    void (*lstm_forward)(float *h, float *c, float *gates, const float *c_prev, int64_t rows,
                         int64_t u);
    void (*lstm_backward)(float *dgates, float *dc_prev, const float *dh, const float *dc,
                          const float *gates, const float *c, const float *c_prev, int64_t rows,
                          int64_t u);
    void (*gru_forward)(float *h, float *gates, const float *rec, const float *h_prev, int64_t rows,
                        int64_t u);
    void (*gru_backward)(float *dgates, float *drec, float *dh_prev, const float *dh,
                         const float *gates, const float *rec, const float *h_prev, int64_t rows,
                         int64_t u);
};

const struct rnn_gate_kernels *minidl_rnn_gate_kernels_avx2(void);
const struct rnn_gate_kernels *minidl_rnn_gate_kernels_avx512(void);

/* One block of `rows` rows of an LSTM (GRU) step on the calling thread, with whichever rows (vector
 * or reference) minidl_lstm_gates_forward / _backward would use (rnn_gates.c); the activation
 * codes must pass rnn_gate_activation_ok. */
void rnn_lstm_forward_block(float *h, float *c, float *gates, const float *c_prev, int act, int ract,
                            int64_t rows, int64_t u);
void rnn_lstm_backward_block(float *dgates, float *dc_prev, const float *dh, const float *dc,
                             const float *gates, const float *c, const float *c_prev, int act, int ract,
                             int64_t rows, int64_t u);
void rnn_gru_forward_block(float *h, float *gates, const float *rec, const float *h_prev, int act, int ract,
                           int64_t rows, int64_t u);
void rnn_gru_backward_block(float *dgates, float *drec, float *dh_prev, const float *dh, const float *gates,
                            const float *rec, const float *h_prev, int act, int ract, int64_t rows, int64_t u);
int rnn_gate_activation_ok(int kind);

#endif
