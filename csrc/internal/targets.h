#ifndef MINIDL_TARGETS_H
#define MINIDL_TARGETS_H

#include <stdint.h>

/* Whether a sparse target (n) lies outside [0, k): the losses and metrics check before writing. */
static inline int targets_out_of_range(const int32_t *targets, int64_t n, int64_t k)
{
    for (int64_t r = 0; r < n; r++)
        if (targets[r] < 0 || targets[r] >= k) return 1;
    return 0;
}

#endif
