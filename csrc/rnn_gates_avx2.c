/* The LSTM / GRU vector rows for AVX2 + FMA (8 floats per vector). */
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#include "internal/simd_avx2.h"
#include "internal/rnn_gates_impl.h"

const struct rnn_gate_kernels *minidl_rnn_gate_kernels_avx2(void) { return &isa_rnn_kernels; }
