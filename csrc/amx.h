/* AMX (Advanced Matrix Extensions, Intel Sapphire Rapids and later): whether its tiles may be
 * used in this process, and the switch that turns the AMX kernels off.
 *
 * Three things must hold before a tile instruction may run: the CPU has AMX-TILE with AMX-BF16
 * and AMX-INT8 (cpuid leaf 7: edx bits 24, 22, 25), the OS saves the tile state (XCR0 bits 17
 * and 18), and Linux granted this process the tile data state: it is off by default (XFD) and a
 * tile instruction run without asking kills the process with SIGILL. The permission is asked
 * once, with arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); it covers every thread of the
 * process, OpenMP's included. Each thread that runs tiles still loads its own tile config. */
#ifndef MINIDL_AMX_H
#define MINIDL_AMX_H

/* 1 when this CPU, OS and process can run AMX tiles (the permission is asked on the first
 * call and the answer kept), else 0. */
int minidl_amx_available(void);

/* 1 when the AMX kernels run: available, the active ISA is avx512 (minidl_set_isa chose no
 * lower path) and minidl_set_amx did not switch them off. Kernels test this at each call. */
int minidl_amx_active(void);

/* Switch the AMX kernels on (1, the default when available) or off (0): MINIDL_AMX, tests and
 * benchmarks. Returns minidl_amx_active(). */
int minidl_set_amx(int on);

/* One line for the backend's info(): what runs, or why AMX does not. */
const char *minidl_amx_status(void);

#endif
