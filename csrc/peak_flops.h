#ifndef MINIDL_PEAK_FLOPS_H
#define MINIDL_PEAK_FLOPS_H

/* Measured peak FP32 rate of this machine in GFLOP/s: every kernel thread runs
   independent FMA chains with the widest vectors of `isa` (0 generic, 1 avx2,
   2 avx512, clamped to what the CPU has) for about duration_ms milliseconds. */
double minidl_peak_gflops(int duration_ms, int isa);

#endif
