/* Portable int8 micro-kernel: the plain reference of the vector ones, same sums in int32. */
#include "internal/qgemm_kernels.h"

void qgemm_ukernel_generic(const struct qgemm_epilogue *e, int64_t row0, int rows, int cols,
                           const uint8_t *a, int64_t lda, const int8_t *w, int64_t k, int64_t np)
{
    int32_t acc[QGEMM_MR * 16] = {0};
    for (int i = 0; i < rows; i++) {
        const uint8_t *row = a + i * lda;
        for (int64_t p = 0; p < k; p++) {
            const int8_t *wp = w + (p / 4) * np * 4 + p % 4;
            int32_t av = row[p];
            for (int j = 0; j < 16; j++)
                acc[i * 16 + j] += av * wp[4 * j];
        }
    }
    qgemm_store_block(e, row0, rows, cols, acc);
}
