/* Whole-sequence LSTM and GRU loops: every time step's recurrent projection and gate kernel inside one
 * parallel region.
 *
 * Calling minidl_sgemm and the gate kernels once per step costs two thread wake-ups per step
 * (the kernels' OpenMP threads wait passively, cpu_features.h), and a wake-up costs about as
 * much as the step's 64 x 256 x 1024 product itself. The recurrence of one batch row reads no
 * other row, so here each thread takes a run of batch rows for the whole sequence: per step it
 * multiplies its rows of h_{t-1} by the recurrent kernel U (packed once by minidl_sgemm_pack_b,
 * gemm.h) and runs the gate kernel (rnn_gates.h) on them, and never waits for the other threads.
 * The results are those of the per-step loop of minidl/backends/recurrent_host.py, which the
 * tests compare them with (and which runs sequences with masks or recurrent dropout).
 *
 * Shapes are time-major: hseq, cseq (T, n, u); gates, dgates (T, n, 4u) for LSTM, gates, recs,
 * dgates, drecs (T, n, 3u) for GRU; h0, c0 (n, u). packed_u / packed_ut hold U (u, k u) / U^T
 * (k u, u) as minidl_sgemm_pack_b packed them for the micro-kernel `kernel`. Activation codes as in rnn_gates.h. Each returns MINIDL_OK,
 * MINIDL_INVALID_SIZE for an activation outside rnn_gates.h's list or a kernel index this CPU
 * cannot run, or MINIDL_OUT_OF_MEMORY (a pack buffer; the outputs are then incomplete). */
#ifndef MINIDL_RNN_SEQUENCE_H
#define MINIDL_RNN_SEQUENCE_H

#include <stdint.h>

/* gates holds x W + b on entry (each step gets h_{t-1} U added) and the activated gates on
 * return; hseq and cseq receive every step's h and c. */
int minidl_lstm_sequence_forward(float *hseq, float *cseq, float *gates, const float *h0, const float *c0,
                                 const float *packed_u, int kernel, int activation, int recurrent_activation,
                                 int64_t steps, int64_t n, int64_t units);

/* dgates = dL/d(pre-activations) of every step, from dhseq = dL/dh_t of the outputs and
 * dc_last = dL/dc_T (NULL: zero); dh0 and dc0 end as dL/dh0 and dL/dc0. gates, cseq as the
 * forward left them, c0 the initial cell state. The recurrent kernel's gradient is left to one
 * GEMM over the whole sequence (the caller's). */
int minidl_lstm_sequence_backward(float *dgates, float *dh0, float *dc0, const float *dhseq,
                                  const float *dc_last, const float *gates, const float *cseq,
                                  const float *c0, const float *packed_ut, int kernel, int activation,
                                  int recurrent_activation, int64_t steps, int64_t n, int64_t units);

/* GRU with reset_after=True (rnn_gates.h): recs receives every step's recurrent projection
 * h_{t-1} U + recurrent_bias, gates holds x W + b_input on entry and the activated gates on
 * return, hseq every step's h. */
int minidl_gru_sequence_forward(float *hseq, float *gates, float *recs, const float *h0, const float *packed_u,
                                const float *recurrent_bias, int kernel, int activation, int recurrent_activation,
                                int64_t steps, int64_t n, int64_t units);

/* dgates = dL/d(input projection) and drecs = dL/d(recurrent projection) of every step, from
 * dhseq; dh0 ends as dL/dh0. gates, recs, hseq as the forward left them. The recurrent
 * kernel's and bias's gradients are the caller's (sums over drecs). */
int minidl_gru_sequence_backward(float *dgates, float *drecs, float *dh0, const float *dhseq, const float *gates,
                                 const float *recs, const float *hseq, const float *h0, const float *packed_ut,
                                 int kernel, int activation, int recurrent_activation, int64_t steps, int64_t n,
                                 int64_t units);

#endif
