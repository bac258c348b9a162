/* AMX availability and its switch (csrc/amx.h). */
#include "amx.h"
#include "cpu_features.h"

#if defined(__linux__) && defined(__x86_64__)
#include <cpuid.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARCH_GET_XCOMP_PERM 0x1022
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

static int available = 0;
static char status_line[160] = "amx: not checked";

static unsigned long long read_xcr0(void)
{
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

static void check_once(void)
{
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !((ecx >> 27) & 1) ||
        !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
        snprintf(status_line, sizeof status_line, "amx: not on this CPU");
        return;
    }
    int has_bf16 = (edx >> 22) & 1, has_tile = (edx >> 24) & 1, has_int8 = (edx >> 25) & 1;
    if (!(has_tile && has_bf16 && has_int8)) {
        snprintf(status_line, sizeof status_line, "amx: not on this CPU");
        return;
    }
    if ((read_xcr0() & (3ull << 17)) != (3ull << 17)) {
        snprintf(status_line, sizeof status_line, "amx: the OS does not enable the tile state (XCR0)");
        return;
    }
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0) {
        snprintf(status_line, sizeof status_line,
                 "amx: Linux refused the tile data permission (%s); the AVX-512 kernels run", strerror(errno));
        return;
    }
    unsigned long long granted = 0;
    if (syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &granted) != 0 || !((granted >> XFEATURE_XTILEDATA) & 1)) {
        snprintf(status_line, sizeof status_line, "amx: the tile data permission was not granted");
        return;
    }
    available = 1;
    snprintf(status_line, sizeof status_line, "amx: bf16 and int8 tiles");
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

int minidl_amx_available(void)
{
    pthread_once(&once, check_once);
    return available;
}

const char *minidl_amx_status(void)
{
    pthread_once(&once, check_once);
    return status_line;
}
#else
int minidl_amx_available(void) { return 0; }
const char *minidl_amx_status(void) { return "amx: not on this platform"; }
#endif

static int switched_on = 1;

int minidl_amx_active(void)
{
    return switched_on && minidl_cpu_isa() >= MINIDL_ISA_AVX512 && minidl_amx_available();
}

int minidl_set_amx(int on)
{
    switched_on = on != 0;
    return minidl_amx_active();
}
