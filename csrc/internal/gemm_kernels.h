#ifndef MINIDL_GEMM_KERNELS_H
#define MINIDL_GEMM_KERNELS_H

#include <stddef.h>

/* A micro-kernel computes one MR x NR tile of C:
 *   acc = a @ b over kc steps, then c = acc (beta == 0, c is not read) or
 *   c = beta * c + acc.
 * a is (MR, kc) with element (i, p) at a[i * rs_a + p * cs_a], and either rs_a == 1
 * (columns contiguous; a packed micro-panel has cs_a == MR) or cs_a == 1 (rows
 * contiguous: A read in place, unpacked).
 * b is a packed (kc, NR) micro-panel, 64-byte aligned: row p is b[p * NR .. p * NR + NR).
 * c is (MR, NR) with row stride ldc. */
typedef void (*sgemm_ukernel_fn)(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                                 const float *b, float *c, ptrdiff_t ldc, float beta);

/* Everything the portable gemm loops need to know about one ISA. */
typedef struct {
    const char *name;
    int mr, nr;     /* register tile of the micro-kernel */
    int mc, kc, nc; /* cache blocks: A block mc x kc stays in L2, B panel kc x nr in L1 */
    int fast_row_gather; /* reading A's rows in place (cs_a == 1) is as fast as packed panels */
    sgemm_ukernel_fn ukernel;
    int isa;             /* the MINIDL_ISA_* it needs */
    int ir_outer;        /* macro-kernel loop order: A micro-panel in L1, B block kc x nc in L2 */
} sgemm_kernel_info;

/* Micro-kernels, one per file; the x86 ones exist only on x86. */
#define SGEMM_GENERIC_MR 4
#define SGEMM_GENERIC_NR 8
void sgemm_ukernel_generic_4x8(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a, const float *b,
                               float *c, ptrdiff_t ldc, float beta);

#if defined(__x86_64__) || defined(__i386__)
#define MINIDL_HAVE_X86_KERNELS 1
#define SGEMM_AVX2_MR 6
#define SGEMM_AVX2_NR 16
void sgemm_ukernel_avx2_6x16(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a, const float *b,
                             float *c, ptrdiff_t ldc, float beta);
#define SGEMM_AVX512_MR 12
#define SGEMM_AVX512_NR 32
void sgemm_ukernel_avx512_12x32(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a, const float *b,
                                float *c, ptrdiff_t ldc, float beta);
#endif

/* The kernel table entry in use: the one minidl_sgemm_select_kernel chose when the ISA in use
 * (minidl_cpu_isa()) can run it, else the default of that ISA on this CPU. */
const sgemm_kernel_info *sgemm_active_kernel(void);

/* C (m, n) = alpha * A (m, k) @ B (k, n) + beta * C on the calling thread only, with A
 * and B given by strides: A[i][p] = a[i * rs_a + p * cs_a], B[p][j] = b[p * rs_b + j * cs_b].
 * Used by the conv kernels, which parallelize over the batch themselves. The functions that
 * return int return MINIDL_OK, or MINIDL_OUT_OF_MEMORY when a pack buffer cannot grow
 * (status.h); c is then incomplete. */
int sgemm_strided_serial(float *c, ptrdiff_t ldc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                          const float *b, ptrdiff_t rs_b, ptrdiff_t cs_b, int m, int n, int k,
                          float alpha, float beta);

/* B packed once and reused by many products (a conv's weights, shared by every chunk):
 * sgemm_pack_b writes B (k, n) (B[p][j] = b[p * rs_b + j * cs_b]) into `packed`, which
 * holds sgemm_packed_b_floats(k, n) floats, in the layout of the active ISA's kernel;
 * sgemm_prepacked_b_serial then computes c (m, n) = A (m, k) @ B + beta * c. */
size_t sgemm_packed_b_floats(int k, int n);
void sgemm_pack_b(float *packed, const float *b, ptrdiff_t rs_b, ptrdiff_t cs_b, int k, int n);
/* One block of B (k, n) packed whole into NR-wide (k, NR) panels, for callers that
 * choose their own k blocking (k <= the kernel's kc keeps a panel in L1). */
void sgemm_pack_b_block(float *packed, const float *b, ptrdiff_t rs_b, ptrdiff_t cs_b, int k, int n);
int sgemm_prepacked_b_serial(float *c, ptrdiff_t ldc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                              const float *packed_b, int m, int n, int k, float beta);

/* Same product spread over the kernel threads (splitting m or n); call it outside
 * any parallel region. */
int sgemm_strided(float *c, ptrdiff_t ldc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                   const float *b, ptrdiff_t rs_b, ptrdiff_t cs_b, int m, int n, int k,
                   float alpha, float beta);


/* The product with a B that minidl_sgemm_pack_b (gemm.h) packed for the micro-kernel at table
 * index `kernel`, on the calling thread only: c (m, n) = a (m, k, row stride lda) @ B + beta * c.
 * sgemm_packed_kernel_ok says whether this CPU can run that kernel (1) or not (0). */
int sgemm_packed_kernel_ok(int kernel);
int sgemm_packed_serial(float *c, ptrdiff_t ldc, const float *a, ptrdiff_t lda, const float *packed,
                        int kernel, int m, int n, int k, float beta);

#endif
