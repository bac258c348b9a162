/* Whole-sequence LSTM and GRU loops, each thread on its own batch rows (rnn_sequence.h says why). */

#include "rnn_sequence.h"

#include <string.h>

#include "cpu_features.h"
#include "status.h"
#include "internal/gemm_kernels.h"
#include "internal/rnn_gates_kernels.h"

/* Threads for n batch rows: at most one per row, and one in all below the work that pays for a
 * second thread at all (the sequence's multiply-adds, as sgemm_strided's threshold). */
static int sequence_threads(int64_t steps, int64_t n, int64_t units)
{
    int threads = minidl_num_threads();
    if (threads > n)
        threads = (int)n;
    if ((double)steps * n * units * 3 * units < (double)(1 << 18) * 2)
        threads = 1;
    return threads < 1 ? 1 : threads;
}

static int sequence_args_ok(int activation, int recurrent_activation, int kernel)
{
    return rnn_gate_activation_ok(activation) && rnn_gate_activation_ok(recurrent_activation) &&
           sgemm_packed_kernel_ok(kernel);
}

/* The batch rows thread t of `threads` takes: [*r0, *r0 + the count returned). */
static int64_t thread_rows(int64_t n, int t, int threads, int64_t *r0)
{
    *r0 = n * t / threads;
    return n * (t + 1) / threads - *r0;
}

/* The largest of two statuses (MINIDL_OK only if both are). */
static int worse(int status, int failed)
{
    return status > failed ? status : failed;
}

int minidl_lstm_sequence_forward(float *hseq, float *cseq, float *gates, const float *h0, const float *c0,
                                 const float *packed_u, int kernel, int activation, int recurrent_activation,
                                 int64_t steps, int64_t n, int64_t units)
{
    if (!sequence_args_ok(activation, recurrent_activation, kernel))
        return MINIDL_INVALID_SIZE;
    const int64_t u = units, step_h = n * u, step_g = n * 4 * u;
    const int threads = sequence_threads(steps, n, u);
    int status = MINIDL_OK;
#pragma omp parallel for schedule(static, 1) num_threads(threads) reduction(max : status) if (threads > 1)
    for (int t = 0; t < threads; t++) {
        int64_t r0;
        const int64_t rows = thread_rows(n, t, threads, &r0);
        for (int64_t s = 0; s < steps && rows > 0; s++) {
            const float *h_prev = s == 0 ? h0 : hseq + (s - 1) * step_h;
            const float *c_prev = s == 0 ? c0 : cseq + (s - 1) * step_h;
            float *g = gates + s * step_g + r0 * 4 * u;
            int failed = sgemm_packed_serial(g, 4 * u, h_prev + r0 * u, u, packed_u, kernel, (int)rows,
                                             (int)(4 * u), (int)u, 1.0f);
            if (failed) {
                status = worse(status, failed);
                break;
            }
            rnn_lstm_forward_block(hseq + s * step_h + r0 * u, cseq + s * step_h + r0 * u, g,
                                   c_prev + r0 * u, activation, recurrent_activation, rows, u);
        }
    }
    return status;
}

int minidl_lstm_sequence_backward(float *dgates, float *dh0, float *dc0, const float *dhseq,
                                  const float *dc_last, const float *gates, const float *cseq,
                                  const float *c0, const float *packed_ut, int kernel, int activation,
                                  int recurrent_activation, int64_t steps, int64_t n, int64_t units)
{
    if (!sequence_args_ok(activation, recurrent_activation, kernel))
        return MINIDL_INVALID_SIZE;
    const int64_t u = units, step_h = n * u, step_g = n * 4 * u;
    const int threads = sequence_threads(steps, n, u);
    int status = MINIDL_OK;
#pragma omp parallel for schedule(static, 1) num_threads(threads) reduction(max : status) if (threads > 1)
    for (int t = 0; t < threads; t++) {
        int64_t r0;
        const int64_t rows = thread_rows(n, t, threads, &r0), o = r0 * u;
        if (rows <= 0)
            continue;
        /* dh0 carries dL/dh of the step being run, dc0 dL/dc; both end as the initial state's */
        float *dh = dh0 + o, *dc = dc0 + o;
        memcpy(dh, dhseq + (steps - 1) * step_h + o, sizeof(float) * rows * u);
        if (dc_last)
            memcpy(dc, dc_last + o, sizeof(float) * rows * u);
        else
            memset(dc, 0, sizeof(float) * rows * u);
        for (int64_t s = steps - 1; s >= 0; s--) {
            const float *c_prev = s == 0 ? c0 : cseq + (s - 1) * step_h;
            float *dg = dgates + s * step_g + 4 * o;
            rnn_lstm_backward_block(dg, dc, dh, dc, gates + s * step_g + 4 * o, cseq + s * step_h + o,
                                    c_prev + o, activation, recurrent_activation, rows, u);
            float beta = 0.0f;
            if (s > 0) {
                memcpy(dh, dhseq + (s - 1) * step_h + o, sizeof(float) * rows * u);
                beta = 1.0f;
            }
            int failed = sgemm_packed_serial(dh, u, dg, 4 * u, packed_ut, kernel, (int)rows, (int)u,
                                             (int)(4 * u), beta);
            if (failed) {
                status = worse(status, failed);
                break;
            }
        }
    }
    return status;
}

int minidl_gru_sequence_forward(float *hseq, float *gates, float *recs, const float *h0, const float *packed_u,
                                const float *recurrent_bias, int kernel, int activation, int recurrent_activation,
                                int64_t steps, int64_t n, int64_t units)
{
    if (!sequence_args_ok(activation, recurrent_activation, kernel))
        return MINIDL_INVALID_SIZE;
    const int64_t u = units, step_h = n * u, step_g = n * 3 * u;
    const int threads = sequence_threads(steps, n, u);
    int status = MINIDL_OK;
#pragma omp parallel for schedule(static, 1) num_threads(threads) reduction(max : status) if (threads > 1)
    for (int t = 0; t < threads; t++) {
        int64_t r0;
        const int64_t rows = thread_rows(n, t, threads, &r0);
        for (int64_t s = 0; s < steps && rows > 0; s++) {
            const float *h_prev = (s == 0 ? h0 : hseq + (s - 1) * step_h) + r0 * u;
            float *rec = recs + s * step_g + r0 * 3 * u;
            int failed = sgemm_packed_serial(rec, 3 * u, h_prev, u, packed_u, kernel, (int)rows, (int)(3 * u),
                                             (int)u, 0.0f);
            if (failed) {
                status = worse(status, failed);
                break;
            }
            for (int64_t r = 0; r < rows; r++)
                for (int64_t j = 0; j < 3 * u; j++) rec[r * 3 * u + j] += recurrent_bias[j];
            rnn_gru_forward_block(hseq + s * step_h + r0 * u, gates + s * step_g + r0 * 3 * u, rec, h_prev,
                                  activation, recurrent_activation, rows, u);
        }
    }
    return status;
}

int minidl_gru_sequence_backward(float *dgates, float *drecs, float *dh0, const float *dhseq, const float *gates,
                                 const float *recs, const float *hseq, const float *h0, const float *packed_ut,
                                 int kernel, int activation, int recurrent_activation, int64_t steps, int64_t n,
                                 int64_t units)
{
    if (!sequence_args_ok(activation, recurrent_activation, kernel))
        return MINIDL_INVALID_SIZE;
    const int64_t u = units, step_h = n * u, step_g = n * 3 * u;
    const int threads = sequence_threads(steps, n, u);
    int status = MINIDL_OK;
#pragma omp parallel for schedule(static, 1) num_threads(threads) reduction(max : status) if (threads > 1)
    for (int t = 0; t < threads; t++) {
        int64_t r0;
        const int64_t rows = thread_rows(n, t, threads, &r0), o = r0 * u;
        if (rows <= 0)
            continue;
        float *dh = dh0 + o;     /* dL/dh of the step being run; ends as the initial state's */
        memcpy(dh, dhseq + (steps - 1) * step_h + o, sizeof(float) * rows * u);
        for (int64_t s = steps - 1; s >= 0; s--) {
            const float *h_prev = (s == 0 ? h0 : hseq + (s - 1) * step_h) + o;
            float *dq = drecs + s * step_g + 3 * o;
            /* the kernel's dh_prev output (dh z) may overwrite its dh input */
            rnn_gru_backward_block(dgates + s * step_g + 3 * o, dq, dh, dh, gates + s * step_g + 3 * o,
                                   recs + s * step_g + 3 * o, h_prev, activation, recurrent_activation, rows, u);
            if (s > 0) {
                const float *later = dhseq + (s - 1) * step_h + o;
                for (int64_t i = 0; i < rows * u; i++) dh[i] += later[i];
            }
            int failed = sgemm_packed_serial(dh, u, dq, 3 * u, packed_ut, kernel, (int)rows, (int)u,
                                             (int)(3 * u), 1.0f);
            if (failed) {
                status = worse(status, failed);
                break;
            }
        }
    }
    return status;
}
