/* An FMA loop that measures the machine's peak FP32 rate, so the benchmark can say
   what fraction of peak the kernels reach. Each ISA's loop keeps more independent
   accumulators than (FMA latency x FMA pipes), so only throughput limits it. */

#include "peak_flops.h"

#include <time.h>

#include "cpu_features.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Independent accumulators per loop iteration. With the two constants the FMA chains must
   fit the register file (16 ymm registers, 32 zmm), or spills add store-load chains; the
   generic loop's separate multiply and add make each chain twice as long, so it needs more
   (16 measured fastest, spills and all). */
#define PEAK_CHAINS_GENERIC 16
#define PEAK_CHAINS_16_REGS 12
#define PEAK_CHAINS_32_REGS 24
#define PEAK_REPEATS 100000 /* iterations between clock reads */

/* Each loop returns its multiply-adds performed (x2 = flops); sink defeats dead-code elimination. */
static volatile float peak_sink;

static double fma_loop_generic(long repeats)
{
    enum { CHAINS = PEAK_CHAINS_GENERIC };
    float acc[CHAINS][4];
    for (int i = 0; i < CHAINS; i++)
        for (int j = 0; j < 4; j++)
            acc[i][j] = (float)(i + j);
    const float x = 0.999999f, y = 1e-7f;
    for (long r = 0; r < repeats; r++)
        for (int i = 0; i < CHAINS; i++)
            for (int j = 0; j < 4; j++)
                acc[i][j] = acc[i][j] * x + y;
    float s = 0.0f;
    for (int i = 0; i < CHAINS; i++)
        for (int j = 0; j < 4; j++)
            s += acc[i][j];
    peak_sink = s;
    return (double)repeats * CHAINS * 4;
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

__attribute__((target("avx2,fma"))) static double fma_loop_avx2(long repeats)
{
    enum { CHAINS = PEAK_CHAINS_16_REGS };
    __m256 acc[CHAINS];
    for (int i = 0; i < CHAINS; i++)
        acc[i] = _mm256_set1_ps((float)i);
    const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
    for (long r = 0; r < repeats; r++) {
#pragma GCC unroll 24
        for (int i = 0; i < CHAINS; i++)
            acc[i] = _mm256_fmadd_ps(acc[i], x, y);
    }
    __m256 s = _mm256_setzero_ps();
    for (int i = 0; i < CHAINS; i++)
        s = _mm256_add_ps(s, acc[i]);
    peak_sink = _mm256_cvtss_f32(s);
    return (double)repeats * CHAINS * 8;
}

__attribute__((target("avx512f"))) static double fma_loop_avx512(long repeats)
{
    enum { CHAINS = PEAK_CHAINS_32_REGS };
    __m512 acc[CHAINS];
    for (int i = 0; i < CHAINS; i++)
        acc[i] = _mm512_set1_ps((float)i);
    const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
    for (long r = 0; r < repeats; r++) {
#pragma GCC unroll 24
        for (int i = 0; i < CHAINS; i++)
            acc[i] = _mm512_fmadd_ps(acc[i], x, y);
    }
    __m512 s = _mm512_setzero_ps();
    for (int i = 0; i < CHAINS; i++)
        s = _mm512_add_ps(s, acc[i]);
    peak_sink = _mm512_reduce_add_ps(s);
    return (double)repeats * CHAINS * 16;
}
#endif

static double fma_loop(int isa, long repeats)
{
#if defined(__x86_64__) || defined(__i386__)
    if (isa == MINIDL_ISA_AVX512)
        return fma_loop_avx512(repeats);
    if (isa == MINIDL_ISA_AVX2)
        return fma_loop_avx2(repeats);
#endif
    return fma_loop_generic(repeats);
}

/* This thread's CPU time: a rate measured with it is not diluted when other jobs share
   the cores (the threads then just run longer). */
static double thread_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

double minidl_peak_gflops(int duration_ms, int isa)
{
    int best = minidl_cpu_best_isa();
    if (isa > best)
        isa = best;
    double seconds = duration_ms > 0 ? duration_ms / 1000.0 : 0.2;
    double total_rate = 0.0; // FMAs per second, summed over the threads that run side by side
#pragma omp parallel num_threads(minidl_num_threads()) reduction(+ : total_rate)
    {
        fma_loop(isa, PEAK_REPEATS / 10); // warm up: let the core reach its vector clock
        double fmas = 0.0, start = thread_seconds(), t = start, wall_end = wall_seconds() + 20 * seconds;
        do {
            fmas += fma_loop(isa, PEAK_REPEATS);
            t = thread_seconds();
        } while (t - start < seconds && wall_seconds() < wall_end);
        total_rate += t > start ? fmas / (t - start) : 0.0;
    }
    return 2.0 * total_rate / 1e9;
}
