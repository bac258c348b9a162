/* BLIS-structured SGEMM: the loops, cache blocking and packing here are portable C;
 * only the micro-kernel (gemm_ukernel_<isa>.c) is ISA-specific.
 *
 * Loop nest (for one thread):
 *   jc over n in NC columns        B panel kc x nc packed once, reused for all of m
 *     pc over k in KC steps        (beta applies only on the first pc step)
 *       pack B block into NR-wide micro-panels
 *       ic over m in MC rows
 *         pack A block (alpha folded in) into MR-tall micro-panels, unless the
 *         micro-kernel reads A in place (read_a_in_place)
 *         jr over nc in NR, ir over mc in MR: micro-kernel
 * Threads split n (or m) into independent sub-products, so no thread waits for
 * another; each keeps its pack buffers between calls. */

#include "gemm.h"

#include <string.h>

#include <stdlib.h>

#include "cpu_features.h"
#include "internal/checked_alloc.h"
#include "status.h"
#include "internal/gemm_kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* The one place that says which micro-kernel and block sizes each ISA uses.
 * mc * kc floats (the A block) fill about half of a 1 MiB L2; kc * nr floats
 * (one B micro-panel) stay in L1; kc * nc floats (the B block) live in L3.
 * fast_row_gather was measured on the AVX-512 EPYC: its AVX-512 kernel reads A's rows in
 * place faster than from packed panels (240 vs 210 GFLOP/s), its AVX2 kernel slower
 * (77 vs 117), and the generic one alike.
 * On Intel (a Sapphire Rapids Xeon, benchmarks/bench_sgemm.py, one thread, CPU time) the same
 * 12x32 micro-kernel loses a fifth of its speed to the loop order, not to its shape: with the
 * B micro-panel held in L1 and the A panels streamed (jr outer) 2048^3 ran at 119-122 GFLOP/s,
 * with the A micro-panel held in L1 and the kc x nc B block (nc 1024: 1 MiB of the 2 MiB L2)
 * streamed (ir outer) 148-160, numpy/OpenBLAS 148-163. A 14x32 tile (28 accumulators, B and C
 * prefetches) measured the same as 12x32 in either order, and its convolutions 4% slower.
 * Fields: name, mr, nr, mc, kc, nc, fast_row_gather, ukernel, isa, ir_outer. */
static const sgemm_kernel_info kernel_table[] = {
    {"generic 4x8", SGEMM_GENERIC_MR, SGEMM_GENERIC_NR, 256, 256, 4096, 1, sgemm_ukernel_generic_4x8,
     MINIDL_ISA_GENERIC, 0},
#ifdef MINIDL_HAVE_X86_KERNELS
    {"avx2 6x16", SGEMM_AVX2_MR, SGEMM_AVX2_NR, 288, 256, 4096, 0, sgemm_ukernel_avx2_6x16, MINIDL_ISA_AVX2, 0},
    {"avx512 12x32", SGEMM_AVX512_MR, SGEMM_AVX512_NR, 240, 256, 4096, 1, sgemm_ukernel_avx512_12x32,
     MINIDL_ISA_AVX512, 0},
    {"avx512 12x32 intel", SGEMM_AVX512_MR, SGEMM_AVX512_NR, 240, 256, 1024, 1, sgemm_ukernel_avx512_12x32,
     MINIDL_ISA_AVX512, 1},
#endif
};
enum { KERNELS = sizeof kernel_table / sizeof kernel_table[0] };

/* The table index minidl_sgemm_select_kernel chose, or -1: the default. */
static int selected = -1;

static int cpu_is_intel(void)
{
#ifdef MINIDL_HAVE_X86_KERNELS
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
        return 0;
    return ebx == 0x756e6547 && edx == 0x49656e69 && ecx == 0x6c65746e; /* "GenuineIntel" */
#else
    return 0;
#endif
}

/* The default kernel of `isa` on this CPU: the last entry of that ISA, except that AVX-512 runs
 * the Intel entry only on Intel CPUs (the other AVX-512 entry was measured on an EPYC, whose
 * Zen 4 cores split each 512-bit FMA in two 256-bit halves). */
static int default_kernel(int isa)
{
    static int intel = -1;
    if (intel < 0)
        intel = cpu_is_intel();
    int best = 0;
    for (int i = 0; i < KERNELS; i++) {
        if (kernel_table[i].isa != isa)
            continue;
        if (isa == MINIDL_ISA_AVX512 && strstr(kernel_table[i].name, "intel") && !intel)
            continue;
        best = i;
    }
    return best;
}

const sgemm_kernel_info *sgemm_active_kernel(void)
{
    int isa = minidl_cpu_isa();
#ifndef MINIDL_HAVE_X86_KERNELS
    isa = MINIDL_ISA_GENERIC;
#endif
    if (selected >= 0 && kernel_table[selected].isa <= isa)
        return &kernel_table[selected];
    return &kernel_table[default_kernel(isa)];
}

const char *minidl_sgemm_kernel_name(void)
{
    return sgemm_active_kernel()->name;
}

int minidl_sgemm_kernel_count(void)
{
    int isa = minidl_cpu_best_isa(), count = 0;
    for (int i = 0; i < KERNELS; i++)
        count += kernel_table[i].isa <= isa;
    return count;
}

const char *minidl_sgemm_kernel_names(int index)
{
    int isa = minidl_cpu_best_isa();
    for (int i = 0; i < KERNELS; i++)
        if (kernel_table[i].isa <= isa && index-- == 0)
            return kernel_table[i].name;
    return "";
}

int minidl_sgemm_select_kernel(const char *name)
{
    selected = -1;
    if (!name || !*name)
        return 1;
    for (int i = 0; i < KERNELS; i++)
        if (kernel_table[i].isa <= minidl_cpu_best_isa() && strcmp(kernel_table[i].name, name) == 0) {
            selected = i;
            return 1;
        }
    return 0;
}

static int min_int(int a, int b) { return a < b ? a : b; }
static int max_int(int a, int b) { return a > b ? a : b; }

/* Per-thread pack buffers, grown on demand and kept for the life of the thread,
 * so that no training step allocates. NULL when growing failed (MINIDL_OUT_OF_MEMORY). */
static __thread float *pack_a_buf, *pack_b_buf;
static __thread size_t pack_a_cap, pack_b_cap;

static float *pack_buffer(float **buf, size_t *cap, size_t need)
{
    if (need > *cap) {
        free(*buf);
        *buf = minidl_alloc_floats(need);
        *cap = *buf ? need : 0;
    }
    return *buf;
}

/* dst (mc/MR panels of (kc, MR)) = alpha * A[0:mc, 0:kc]; rows past mc are zero. */
static void pack_a(float *restrict dst, const float *restrict a, ptrdiff_t rs, ptrdiff_t cs, int mc,
                   int kc, int mr, float alpha)
{
    for (int ir = 0; ir < mc; ir += mr) {
        int rows = min_int(mr, mc - ir);
        const float *src = a + ir * rs;
        if (cs == 1) { // rows of A are contiguous: read along them
            for (int i = 0; i < rows; i++)
                for (int p = 0; p < kc; p++)
                    dst[p * mr + i] = alpha * src[i * rs + p];
        } else {
            for (int p = 0; p < kc; p++)
                for (int i = 0; i < rows; i++)
                    dst[p * mr + i] = alpha * src[i * rs + p * cs];
        }
        if (rows < mr)
            for (int p = 0; p < kc; p++)
                for (int i = rows; i < mr; i++)
                    dst[p * mr + i] = 0.0f;
        dst += (size_t)mr * kc;
    }
}

/* dst (nc/NR panels of (kc, NR)) = B[0:kc, 0:nc]; columns past nc are zero. */
static void pack_b(float *restrict dst, const float *restrict b, ptrdiff_t rs, ptrdiff_t cs, int kc,
                   int nc, int nr)
{
    for (int jr = 0; jr < nc; jr += nr) {
        int cols = min_int(nr, nc - jr);
        const float *src = b + jr * cs;
        if (cs == 1 && cols == nr) {
            for (int p = 0; p < kc; p++)
                memcpy(dst + p * nr, src + p * rs, sizeof(float) * nr);
        } else if (cs == 1) {
            for (int p = 0; p < kc; p++)
                for (int j = 0; j < nr; j++)
                    dst[p * nr + j] = j < cols ? src[p * rs + j] : 0.0f;
        } else { // columns of B are contiguous: read along them
            for (int j = 0; j < cols; j++)
                for (int p = 0; p < kc; p++)
                    dst[p * nr + j] = src[j * cs + p * rs];
            for (int j = cols; j < nr; j++)
                for (int p = 0; p < kc; p++)
                    dst[p * nr + j] = 0.0f;
        }
        dst += (size_t)nr * kc;
    }
}

/* The A block as the micro-kernels read it: micro-panel ir starts at base + ir * row_step
 * and holds element (i, p) at [i * rs + p * cs]. A packed block has row_step kc, rs 1,
 * cs MR; an unpacked one is A itself with its own strides. */
typedef struct {
    const float *base;
    ptrdiff_t row_step, rs, cs;
    int packed;
} a_block;

/* c (mc, nc) = A block @ packed B block (+ beta * c). Loop order: jr outer (each B micro-panel
 * stays in L1 while the A panels stream from L2), or, for kernels with ir_outer, ir outer (each
 * A micro-panel stays in L1 while the B panels of the kc x nc block stream from L2). */
static void macro_kernel(const sgemm_kernel_info *kern, float *c, ptrdiff_t ldc, a_block a,
                         const float *pb, int mc, int nc, int kc, float beta)
{
    const int mr = kern->mr, nr = kern->nr;
    float edge[32 * 32] __attribute__((aligned(64)));     // one MR x NR tile, MR, NR <= 32
    float edge_a[32 * 256] __attribute__((aligned(64)));  // one short A micro-panel; every kc <= 256
    const int outer = kern->ir_outer ? mc : nc, outer_step = kern->ir_outer ? mr : nr;
    const int inner = kern->ir_outer ? nc : mc, inner_step = kern->ir_outer ? nr : mr;
    for (int o = 0; o < outer; o += outer_step) {
        for (int in = 0; in < inner; in += inner_step) {
            const int ir = kern->ir_outer ? o : in, jr = kern->ir_outer ? in : o;
            int cols = min_int(nr, nc - jr), rows = min_int(mr, mc - ir);
            const float *b_panel = pb + (size_t)jr * kc;     // b_panel is (kc, NR)
            const float *a_panel = a.base + ir * a.row_step; // a_panel is (MR, kc)
            ptrdiff_t rs = a.rs, cs = a.cs;
            if (rows < mr && !a.packed) { // the unpacked A ends mid-panel: pad a copy with zeros
                pack_a(edge_a, a_panel, a.rs, a.cs, rows, kc, mr, 1.0f);
                a_panel = edge_a, rs = 1, cs = mr;
            }
            float *ct = c + ir * ldc + jr; // ct is (rows, cols), row stride ldc
            if (rows == mr && cols == nr) {
                kern->ukernel(kc, a_panel, rs, cs, b_panel, ct, ldc, beta);
                continue;
            }
            kern->ukernel(kc, a_panel, rs, cs, b_panel, edge, nr, 0.0f);
            for (int i = 0; i < rows; i++)
                for (int j = 0; j < cols; j++)
                    ct[i * ldc + j] = beta == 0.0f ? edge[i * nr + j] : beta * ct[i * ldc + j] + edge[i * nr + j];
        }
    }
}

/* Whether the micro-kernels should read A in place rather than from a packed copy.
 * Row-contiguous A is read in place when the kernel gathers rows fast (its MR rows by
 * broadcasts from memory; on the AVX-512 EPYC faster than packing, even for 1024 x 1024
 * products with their 4 KiB row strides), or when a single B panel would use a packed copy. Column-contiguous A (a transposed operand) is read in place when packing
 * would not pay off: few B panels reuse each A panel (small n), or its columns lie close
 * together. A scaled A (alpha != 1) is packed, since packing is where alpha is applied. */
static int read_a_in_place(const sgemm_kernel_info *kern, ptrdiff_t rs_a, ptrdiff_t cs_a, int n, float alpha)
{
    if (alpha != 1.0f)
        return 0;
    if (cs_a == 1)
        return kern->fast_row_gather || n <= kern->nr;
    return rs_a == 1 && (n <= 4 * kern->nr || cs_a <= 256);
}

static void scale_c(float *c, ptrdiff_t ldc, int m, int n, float beta)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
}

/* c (m, nc) (+)= alpha * A (m, kc) @ the packed B block pb (kc, nc): the ic loop. */
static int gemm_ic_loop(const sgemm_kernel_info *kern, float *c, ptrdiff_t ldc, const float *a,
                         ptrdiff_t rs_a, ptrdiff_t cs_a, const float *pb, int m, int nc, int kc,
                         float alpha, float beta)
{
    const int mr = kern->mr;
    const int in_place = read_a_in_place(kern, rs_a, cs_a, nc, alpha);
    float *pa = NULL;
    if (!in_place) {
        const int mc_max = min_int(kern->mc, (m + mr - 1) / mr * mr);
        pa = pack_buffer(&pack_a_buf, &pack_a_cap, (size_t)mc_max * kern->kc);
        if (!pa)
            return MINIDL_OUT_OF_MEMORY;
    }
    for (int ic = 0; ic < m; ic += kern->mc) {
        int mc = min_int(kern->mc, m - ic);
        const float *a_ic = a + ic * rs_a; // a_ic is (mc, kc)
        a_block block = {a_ic, rs_a, rs_a, cs_a, 0};
        if (!in_place) {
            pack_a(pa, a_ic, rs_a, cs_a, mc, kc, mr, alpha);
            block = (a_block){pa, kc, 1, mr, 1};
        }
        macro_kernel(kern, c + ic * ldc, ldc, block, pb, mc, nc, kc, beta);
    }
    return MINIDL_OK;
}

int sgemm_strided_serial(float *c, ptrdiff_t ldc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                          const float *b, ptrdiff_t rs_b, ptrdiff_t cs_b, int m, int n, int k,
                          float alpha, float beta)
{
    if (m <= 0 || n <= 0)
        return MINIDL_OK;
    if (k <= 0 || alpha == 0.0f) {
        scale_c(c, ldc, m, n, beta);
        return MINIDL_OK;
    }
    const sgemm_kernel_info *kern = sgemm_active_kernel();
    const int nr = kern->nr;
    const int kc_max = min_int(kern->kc, k);
    const int nc_max = min_int(kern->nc, (n + nr - 1) / nr * nr);
    float *pb = pack_buffer(&pack_b_buf, &pack_b_cap, (size_t)kc_max * (nc_max + nr));
    if (!pb)
        return MINIDL_OUT_OF_MEMORY;

    for (int jc = 0; jc < n; jc += kern->nc) {
        int nc = min_int(kern->nc, n - jc);
        for (int pc = 0; pc < k; pc += kern->kc) {
            int kc = min_int(kern->kc, k - pc);
            pack_b(pb, b + pc * rs_b + jc * cs_b, rs_b, cs_b, kc, nc, nr);
            int status = gemm_ic_loop(kern, c + jc, ldc, a + pc * cs_a, rs_a, cs_a, pb, m, nc, kc, alpha,
                                      pc == 0 ? beta : 1.0f);
            if (status != MINIDL_OK)
                return status;
        }
    }
    return MINIDL_OK;
}

size_t sgemm_packed_b_floats(int k, int n)
{
    return (size_t)k * (n + 32); // n rounded up to NR <= 32, for whichever ISA packs it
}

void sgemm_pack_b(float *packed, const float *b, ptrdiff_t rs_b, ptrdiff_t cs_b, int k, int n)
{
    const sgemm_kernel_info *kern = sgemm_active_kernel();
    const size_t n_padded = (size_t)(n + kern->nr - 1) / kern->nr * kern->nr;
    for (int pc = 0; pc < k; pc += kern->kc)
        pack_b(packed + pc * n_padded, b + pc * rs_b, rs_b, cs_b, min_int(kern->kc, k - pc), n, kern->nr);
}

void sgemm_pack_b_block(float *packed, const float *b, ptrdiff_t rs_b, ptrdiff_t cs_b, int k, int n)
{
    pack_b(packed, b, rs_b, cs_b, k, n, sgemm_active_kernel()->nr);
}

int sgemm_prepacked_b_serial(float *c, ptrdiff_t ldc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                             const float *packed_b, int m, int n, int k, float beta)
{
    if (m <= 0 || n <= 0)
        return MINIDL_OK;
    if (k <= 0) {
        scale_c(c, ldc, m, n, beta);
        return MINIDL_OK;
    }
    const sgemm_kernel_info *kern = sgemm_active_kernel();
    const size_t n_padded = (size_t)(n + kern->nr - 1) / kern->nr * kern->nr;
    for (int pc = 0; pc < k; pc += kern->kc) {
        int status = gemm_ic_loop(kern, c, ldc, a + pc * cs_a, rs_a, cs_a, packed_b + pc * n_padded, m, n,
                                  min_int(kern->kc, k - pc), 1.0f, pc == 0 ? beta : 1.0f);
        if (status != MINIDL_OK)
            return status;
    }
    return MINIDL_OK;
}

/* Below this many multiply-adds a second thread costs more than it saves. */
#define SGEMM_MIN_FLOPS_PER_THREAD (1 << 18)

/* A right operand packed once for many products (minidl_sgemm_pack_b, gemm.h): the layout of
 * sgemm_pack_b for the kernel at table index `kernel`, recorded when it was packed. */
int64_t minidl_sgemm_packed_b_floats(int k, int n)
{
    return (int64_t)sgemm_packed_b_floats(k, n);
}

int minidl_sgemm_pack_b(float *packed, int *kernel, const float *b, int trans_b, int k, int n, int ldb)
{
    const sgemm_kernel_info *kern = sgemm_active_kernel();
    *kernel = (int)(kern - kernel_table);
    const size_t n_padded = (size_t)(n + kern->nr - 1) / kern->nr * kern->nr;
    const ptrdiff_t rs = trans_b ? 1 : ldb, cs = trans_b ? ldb : 1;
    int blocks = (k + kern->kc - 1) / kern->kc;
    /* The blocks of k are independent: a transposed B (columns gathered) is the slow case. */
#pragma omp parallel for schedule(static) num_threads(minidl_num_threads()) if (blocks > 1)
    for (int blk = 0; blk < blocks; blk++) {
        int pc = blk * kern->kc;
        pack_b(packed + pc * n_padded, b + pc * rs, rs, cs, min_int(kern->kc, k - pc), n, kern->nr);
    }
    return MINIDL_OK;
}

/* c[:, j0:j1] of the product with the packed B; j0 is a multiple of NR. Panel jr of the block at
 * row pc lies at packed + pc * n_padded + jr * kc (sgemm_pack_b's layout). */
static int prepacked_columns(const sgemm_kernel_info *kern, float *c, ptrdiff_t ldc, const float *a,
                             ptrdiff_t lda, const float *packed, size_t n_padded, int m, int j0, int j1,
                             int k, float beta)
{
    for (int pc = 0; pc < k; pc += kern->kc) {
        int kc = min_int(kern->kc, k - pc);
        int status = gemm_ic_loop(kern, c + j0, ldc, a + pc, lda, 1, packed + pc * n_padded + (size_t)j0 * kc,
                                  m, j1 - j0, kc, 1.0f, pc == 0 ? beta : 1.0f);
        if (status != MINIDL_OK)
            return status;
    }
    return MINIDL_OK;
}

int sgemm_packed_kernel_ok(int kernel)
{
    return kernel >= 0 && kernel < KERNELS && kernel_table[kernel].isa <= minidl_cpu_best_isa();
}

int sgemm_packed_serial(float *c, ptrdiff_t ldc, const float *a, ptrdiff_t lda, const float *packed,
                        int kernel, int m, int n, int k, float beta)
{
    const sgemm_kernel_info *kern = &kernel_table[kernel];
    if (m <= 0 || n <= 0)
        return MINIDL_OK;
    if (k <= 0) {
        scale_c(c, ldc, m, n, beta);
        return MINIDL_OK;
    }
    const size_t n_padded = (size_t)(n + kern->nr - 1) / kern->nr * kern->nr;
    return prepacked_columns(kern, c, ldc, a, lda, packed, n_padded, m, 0, n, k, beta);
}

int minidl_sgemm_packed(float *c, const float *a, const float *packed, float beta, int kernel, int m, int n,
                        int k, int lda, int ldc)
{
    if (!sgemm_packed_kernel_ok(kernel))
        return MINIDL_INVALID_SIZE;
    if (m <= 0 || n <= 0)
        return MINIDL_OK;
    if (k <= 0) {
        scale_c(c, ldc, m, n, beta);
        return MINIDL_OK;
    }
    const sgemm_kernel_info *kern = &kernel_table[kernel];
    const size_t n_padded = (size_t)(n + kern->nr - 1) / kern->nr * kern->nr;
    int units = (n + kern->nr - 1) / kern->nr, threads = minidl_num_threads();
    double work = (double)m * n * k;
    if (threads > units)
        threads = units;
    if (threads > work / SGEMM_MIN_FLOPS_PER_THREAD)
        threads = (int)(work / SGEMM_MIN_FLOPS_PER_THREAD);
    if (threads <= 1)
        return prepacked_columns(kern, c, ldc, a, lda, packed, n_padded, m, 0, n, k, beta);
    /* One run of whole panels per thread: each packs A once (or reads it in place). */
    int status = MINIDL_OK;
#pragma omp parallel for schedule(static, 1) num_threads(threads) reduction(max : status)
    for (int t = 0; t < threads; t++) {
        int j0 = (int)((long)units * t / threads) * kern->nr, j1 = min_int((int)((long)units * (t + 1) / threads) * kern->nr, n);
        if (j1 > j0)
            status = max_int(status, prepacked_columns(kern, c, ldc, a, lda, packed, n_padded, m, j0, j1, k, beta));
    }
    return status;
}



int sgemm_strided(float *c, ptrdiff_t ldc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                   const float *b, ptrdiff_t rs_b, ptrdiff_t cs_b, int m, int n, int k,
                   float alpha, float beta)
{
    const sgemm_kernel_info *kern = sgemm_active_kernel();
    int m_units = (m + kern->mr - 1) / kern->mr, n_units = (n + kern->nr - 1) / kern->nr;
    int threads = minidl_num_threads();
    /* Threads that split m each pack all of B; threads that split n each pack all of A.
     * A row-contiguous A is not packed at all (read_a_in_place), so then n is split and
     * no work is repeated; otherwise the larger dimension is. */
    int a_unpacked = cs_a == 1 && alpha == 1.0f && kern->fast_row_gather;
    int split_m = a_unpacked && n_units >= 2 * threads ? 0 : m_units >= n_units;
    int units = split_m ? m_units : n_units;
    double work = (double)m * n * (k > 0 ? k : 1);
    if (threads > units)
        threads = units;
    if (threads > work / SGEMM_MIN_FLOPS_PER_THREAD)
        threads = (int)(work / SGEMM_MIN_FLOPS_PER_THREAD);
    if (threads <= 1)
        return sgemm_strided_serial(c, ldc, a, rs_a, cs_a, b, rs_b, cs_b, m, n, k, alpha, beta);
    /* Parts of n repeat no work, so n is cut into a few tasks per thread, handed out
     * dynamically: a thread that loses its core to another job does not hold the rest
     * up. Parts of m each pack all of B, so then each thread gets exactly one part. */
    int tasks = split_m ? threads : min_int(units, 4 * threads);
    int status = MINIDL_OK; /* the largest status of any task: MINIDL_OK only if all succeeded */
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(max : status)
    for (int task = 0; task < tasks; task++) {
        int u0 = (int)((long)units * task / tasks), u1 = (int)((long)units * (task + 1) / tasks);
        if (split_m) {
            int i0 = u0 * kern->mr, i1 = min_int(u1 * kern->mr, m);
            if (i1 > i0)
                status = max_int(status, sgemm_strided_serial(c + i0 * ldc, ldc, a + i0 * rs_a, rs_a, cs_a,
                                                              b, rs_b, cs_b, i1 - i0, n, k, alpha, beta));
        } else {
            int j0 = u0 * kern->nr, j1 = min_int(u1 * kern->nr, n);
            if (j1 > j0)
                status = max_int(status, sgemm_strided_serial(c + j0, ldc, a, rs_a, cs_a, b + j0 * cs_b,
                                                              rs_b, cs_b, m, j1 - j0, k, alpha, beta));
        }
    }
    return status;
}

int minidl_sgemm(float *c, const float *a, const float *b, float alpha, float beta, int trans_a,
                 int trans_b, int m, int n, int k, int lda, int ldb, int ldc)
{
    // a is (m, k) or, transposed, (k, m); b is (k, n) or (n, k); c is (m, n)
    return sgemm_strided(c, ldc, a, trans_a ? 1 : lda, trans_a ? lda : 1,
                         b, trans_b ? 1 : ldb, trans_b ? ldb : 1, m, n, k, alpha, beta);
}

void minidl_sgemm_ref(float *c, const float *a, const float *b, float alpha, float beta, int trans_a,
                      int trans_b, int m, int n, int k, int lda, int ldb, int ldc)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0.0;
            for (int p = 0; p < k; p++) {
                float aip = trans_a ? a[(size_t)p * lda + i] : a[(size_t)i * lda + p];
                float bpj = trans_b ? b[(size_t)j * ldb + p] : b[(size_t)p * ldb + j];
                acc += (double)aip * bpj;
            }
            float *cij = c + (size_t)i * ldc + j;
            *cij = (float)(alpha * acc) + (beta == 0.0f ? 0.0f : beta * *cij);
        }
}
