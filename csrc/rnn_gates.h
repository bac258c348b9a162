/* The fused gate kernels of LSTM and GRU: one call per time step, on the rows of one batch.
 *
 * The layer (minidl/layers/recurrent.py, through the backend) computes the input projection
 * of the whole sequence as one GEMM and, per step, the recurrent projection as one more; these
 * kernels do everything elementwise in between, forward and backward, so a step touches its
 * gate rows once. activation / recurrent_activation are enum minidl_activation codes, one of
 * linear, relu, sigmoid, tanh or hard_sigmoid (their derivatives follow from their outputs).
 * tanh with sigmoid (Keras's defaults) runs vectorized; the others, and the generic ISA, run
 * the plain C reference kernels of rnn_gates.c. Each returns MINIDL_OK, or MINIDL_INVALID_SIZE
 * for an activation code outside that list.
 */
#ifndef MINIDL_RNN_GATES_H
#define MINIDL_RNN_GATES_H

#include <stdint.h>

/* LSTM, gate order i, f, c, o (Keras). gates (n, 4u) holds the pre-activations
 * x W + b + h_prev U on entry and the activated gates on return; c_prev (n, u) is the previous
 * cell state; c (n, u) = f c_prev + i g and h (n, u) = o act(c) are written. */
int minidl_lstm_gates_forward(float *h, float *c, float *gates, const float *c_prev, int activation,
                              int recurrent_activation, int64_t n, int64_t units);

/* dgates (n, 4u) = dL/d(pre-activations) and dc_prev (n, u) = dL/dc_prev from dh (n, u), the
 * gradient of h, and dc (n, u), the gradient of c from later steps (NULL: zero); gates, c and
 * c_prev as the forward step left them. dc_prev may alias dc. */
int minidl_lstm_gates_backward(float *dgates, float *dc_prev, const float *dh, const float *dc,
                               const float *gates, const float *c, const float *c_prev,
                               int activation, int recurrent_activation, int64_t n, int64_t units);

/* GRU with reset_after=True (Keras 3's default), gate order z, r, h. gates (n, 3u) holds the
 * input projection x W + b_input on entry and the activated z, r and candidate hh on return;
 * rec (n, 3u) is the recurrent projection h_prev U + b_recurrent (kept: backward needs its
 * candidate part). h (n, u) = z h_prev + (1 - z) hh with hh = act(x_h + r rec_h). */
int minidl_gru_gates_forward(float *h, float *gates, const float *rec, const float *h_prev,
                             int activation, int recurrent_activation, int64_t n, int64_t units);

/* dgates (n, 3u) = dL/d(input projection), drec (n, 3u) = dL/d(recurrent projection) and
 * dh_prev (n, u) = the part of dL/dh_prev that does not go through U (dh z), from dh (n, u)
 * and the forward step's gates, rec and h_prev. */
int minidl_gru_gates_backward(float *dgates, float *drec, float *dh_prev, const float *dh,
                              const float *gates, const float *rec, const float *h_prev,
                              int activation, int recurrent_activation, int64_t n, int64_t units);

#endif
