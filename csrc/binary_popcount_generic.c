/* Plain C xor-popcount micro-kernel (internal/binary_kernels.h): __builtin_popcount per word,
 * filters in the inner loop so that b is read row by row. */
#include <string.h>

#include "internal/binary_kernels.h"

void binary_popcount_generic(int32_t *pc, const uint32_t *a, const uint32_t *b, int64_t rows,
                             int64_t words, int64_t f)
{
    memset(pc, 0, (size_t)(rows * f) * sizeof(int32_t));
    for (int64_t r = 0; r < rows; r++) {
        int32_t *out = pc + r * f;
        for (int64_t w = 0; w < words; w++) {
            const uint32_t x = a[r * words + w];
            const uint32_t *bw = b + w * f;
            for (int64_t j = 0; j < f; j++) out[j] += __builtin_popcount(x ^ bw[j]);
        }
    }
}
