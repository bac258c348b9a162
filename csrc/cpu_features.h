#ifndef MINIDL_CPU_FEATURES_H
#define MINIDL_CPU_FEATURES_H

/* Instruction sets the cpu backend has kernels for (values of minidl_cpu_isa). */
#define MINIDL_ISA_GENERIC 0
#define MINIDL_ISA_AVX2 1
#define MINIDL_ISA_AVX512 2

/* The ISA whose kernels run: the best one cpuid reports, unless minidl_set_isa chose another
   (the Python side passes settings.current().cpu_isa, MINIDL_CPU_ISA, when it loads the module). */
int minidl_cpu_isa(void);
const char *minidl_cpu_isa_name(void);
/* The best ISA this CPU (and OS) supports, whatever was forced. */
int minidl_cpu_best_isa(void);
/* Select an ISA (MINIDL_CPU_ISA, tests and benchmarks); an ISA the CPU lacks is lowered to the
   best supported one. Returns the ISA now in use. */
int minidl_set_isa(int isa);

/* Threads the kernels use: every core unless minidl_set_num_threads chose a number (the Python
   side passes settings.current().num_threads, MINIDL_NUM_THREADS). */
int minidl_num_threads(void);
/* Change the thread count at run time (n < 1 restores the default); returns it. */
int minidl_set_num_threads(int n);

#endif
