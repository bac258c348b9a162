#ifndef MINIDL_PEAK_FLOPS_H
#define MINIDL_PEAK_FLOPS_H

/* Measured peak FP32 rate of this machine in GFLOP/s: every kernel thread runs
   independent FMA chains with the widest vectors of `isa` (0 generic, 1 avx2,
   2 avx512, clamped to what the CPU has) for about duration_ms milliseconds of its
   own CPU time; the per-thread rates are summed (the rate of the threads running
   side by side, even when other jobs share the cores). */
double minidl_peak_gflops(int duration_ms, int isa);

#endif
