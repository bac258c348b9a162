/* The int8 micro-kernels behind csrc/qgemm.c, one file per ISA (qgemm_ukernel_*.c).
 *
 * A micro-kernel computes acc (rows, MINIDL_QGEMM_NR) int32, row-major, = a @ w for up to
 * QGEMM_MR rows of a (row i at a + i * lda, k bytes each, read only inside the row) and the
 * packed column block w (w + g * np * 4 is k-group g of this block's 16 columns), then applies
 * the epilogue of csrc/qgemm.h to the first `cols` columns, writing out rows of stride ldo. */
#ifndef MINIDL_QGEMM_KERNELS_H
#define MINIDL_QGEMM_KERNELS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define QGEMM_MR 6

struct qgemm_epilogue {
    uint8_t *out_u8;          /* one of the two is NULL */
    float *out_f32;
    int64_t ldo;
    const int32_t *column_offset; /* these three start at the block's first column */
    const float *multiplier;
    int32_t zero_point, relu;
};

typedef void (*qgemm_ukernel_fn)(const struct qgemm_epilogue *e, int64_t row0, int rows, int cols,
                                 const uint8_t *a, int64_t lda, const int8_t *w, int64_t k,
                                 int64_t np);

void qgemm_ukernel_generic(const struct qgemm_epilogue *e, int64_t row0, int rows, int cols,
                           const uint8_t *a, int64_t lda, const int8_t *w, int64_t k, int64_t np);
#if defined(__x86_64__) || defined(__i386__)
void qgemm_ukernel_avx2(const struct qgemm_epilogue *e, int64_t row0, int rows, int cols,
                        const uint8_t *a, int64_t lda, const int8_t *w, int64_t k, int64_t np);
void qgemm_ukernel_vnni(const struct qgemm_epilogue *e, int64_t row0, int rows, int cols,
                        const uint8_t *a, int64_t lda, const int8_t *w, int64_t k, int64_t np);
#endif

/* The AMX path (qgemm_amx.c) runs 32 x 32 blocks of tiles instead of a QGEMM_MR x 16
 * micro-kernel. Between qgemm_amx_begin and qgemm_amx_end (on each thread that runs tiles),
 * qgemm_amx_rows computes rows [r0, r1) of out = epilogue(a @ w) (a's row r at a + r * lda,
 * e at out's row 0 and column 0); apack is the thread's scratch of QGEMM_AMX_APACK(k) bytes, or
 * NULL when a is tile-ready: lda >= qgemm_amx_k64(k), each row zero from k to qgemm_amx_k64(k)
 * and the rows readable up to r1 rounded up to 32;
 * wtail is qgemm_amx_weights_tail's copy of the last k block, NULL when qgemm_amx_k64(k) equals
 * k rounded up to 4 (then no copy is needed; else a NULL from it means out of memory). */
#if defined(__x86_64__) && !defined(__clang__)
#define MINIDL_HAVE_AMX_INT8 1
#define QGEMM_AMX_APACK(k) (32 * qgemm_amx_k64(k))
void qgemm_amx_begin(void);
void qgemm_amx_end(void);
int64_t qgemm_amx_k64(int64_t k);
int8_t *qgemm_amx_weights_tail(const int8_t *w, int64_t k, int64_t np);
void qgemm_amx_rows(const struct qgemm_epilogue *e, int64_t r0, int64_t r1, const uint8_t *a, int64_t lda,
                    const int8_t *w, const int8_t *wtail, int64_t k, int64_t n, int64_t np, uint8_t *apack);
#endif

/* Four bytes of a row starting at k-group g, zero past k (the last group may be partial: the
 * weights there are zero, but the bytes past the row's end may not be readable). */
static inline int32_t qgemm_group(const uint8_t *row, int64_t g, int64_t k)
{
    int32_t v = 0;
    int64_t left = k - 4 * g;
    memcpy(&v, row + 4 * g, left >= 4 ? 4 : (size_t)left);
    return v;
}

/* The 4 bytes of k-group g of a row: a plain 4-byte load for the `full` whole groups. */
static inline int32_t qgemm_row_group(const uint8_t *row, int64_t g, int64_t full, int64_t k)
{
    int32_t four;
    if (g < full) {
        memcpy(&four, row + 4 * g, 4);
        return four;
    }
    return qgemm_group(row, g, k);
}

/* The epilogue of one element (csrc/qgemm.h), in scalar code; the vector paths equal it. */
static inline void qgemm_store_one(const struct qgemm_epilogue *e, int64_t r, int j, int32_t acc)
{
    int32_t sum = (int32_t)((uint32_t)acc + (uint32_t)e->column_offset[j]);
    float v = (float)sum * e->multiplier[j];
    if (e->out_u8) {
        float lo = e->relu ? 0.0f : (float)-e->zero_point, hi = (float)(255 - e->zero_point);
        v = v < lo ? lo : (v > hi ? hi : v);
        e->out_u8[r * e->ldo + j] = (uint8_t)((int32_t)rintf(v) + e->zero_point);
    } else {
        e->out_f32[r * e->ldo + j] = e->relu && v < 0.0f ? 0.0f : v;
    }
}

static inline void qgemm_store_block(const struct qgemm_epilogue *e, int64_t row0, int rows, int cols,
                                     const int32_t *acc)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            qgemm_store_one(e, row0 + i, j, acc[i * 16 + j]);
}

#endif
