/* Which instruction set and how many threads the cpu backend's kernels use.
   The best ISA is found once, at load, from cpuid (never from the compiler flags: the module
   is built with generic flags and runs on any x86-64). The C code reads no environment
   variable: minidl/backends/cpu/_ffi.py passes MINIDL_CPU_ISA and MINIDL_NUM_THREADS (read
   by minidl.settings) through minidl_set_isa and minidl_set_num_threads when it loads us. */

#include "cpu_features.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static unsigned long long read_xcr0(void)
{
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

/* AVX needs the OS to save the ymm state (XCR0 bits 1-2), AVX-512 also the
   opmask and zmm state (bits 5-7); cpuid alone does not say the OS does. */
static int detect_best_isa(void)
{
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return MINIDL_ISA_GENERIC;
    int has_fma = (ecx >> 12) & 1;
    int has_osxsave = (ecx >> 27) & 1;
    int has_avx = (ecx >> 28) & 1;
    if (!has_osxsave || !has_avx || !has_fma)
        return MINIDL_ISA_GENERIC;
    unsigned long long xcr0 = read_xcr0();
    if ((xcr0 & 0x6) != 0x6)
        return MINIDL_ISA_GENERIC;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
        return MINIDL_ISA_GENERIC;
    int has_avx2 = (ebx >> 5) & 1;
    int has_avx512f = (ebx >> 16) & 1;
    int has_avx512dq = (ebx >> 17) & 1;
    int has_avx512bw = (ebx >> 30) & 1;
    int has_avx512vl = (ebx >> 31) & 1;
    if (has_avx512f && has_avx512dq && has_avx512bw && has_avx512vl && (xcr0 & 0xe6) == 0xe6)
        return MINIDL_ISA_AVX512;
    if (has_avx2)
        return MINIDL_ISA_AVX2;
    return MINIDL_ISA_GENERIC;
}
#else
static int detect_best_isa(void) { return MINIDL_ISA_GENERIC; }
#endif

static const char *const isa_names[] = {"generic", "avx2", "avx512"};

static int best_isa = -1;
static int active_isa = -1;
static int num_threads = 0;

/* Every core the process may use. */
static int default_threads(void)
{
#ifdef _OPENMP
    return omp_get_num_procs();
#else
    return 1;
#endif
}

__attribute__((constructor)) static void detect_at_load(void)
{
    if (best_isa >= 0)
        return;
    best_isa = detect_best_isa();
    active_isa = best_isa;
    num_threads = default_threads();
}

int minidl_cpu_best_isa(void)
{
    detect_at_load();
    return best_isa;
}

int minidl_cpu_isa(void)
{
    detect_at_load();
    return active_isa;
}

const char *minidl_cpu_isa_name(void)
{
    return isa_names[minidl_cpu_isa()];
}

int minidl_set_isa(int isa)
{
    detect_at_load();
    if (isa < MINIDL_ISA_GENERIC)
        isa = MINIDL_ISA_GENERIC;
    active_isa = isa > best_isa ? best_isa : isa;
    return active_isa;
}

int minidl_num_threads(void)
{
    detect_at_load();
    return num_threads;
}

int minidl_set_num_threads(int n)
{
    detect_at_load();
    num_threads = n >= 1 ? n : default_threads();
    return num_threads;
}
