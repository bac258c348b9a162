/* The LSTM / GRU vector rows for AVX-512 (16 floats per vector). */
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw")
#include <immintrin.h>

#include "internal/simd_avx512.h"
#include "internal/rnn_gates_impl.h"

const struct rnn_gate_kernels *minidl_rnn_gate_kernels_avx512(void) { return &isa_rnn_kernels; }
