/* Allocation that reports failure instead of aborting (internal/checked_alloc.h), and the
 * test hook that makes it fail. */
#include "status.h"

#include <stdlib.h>

#include "internal/checked_alloc.h"

static int64_t alloc_limit = -1;   /* bytes; < 0 means none */
static int64_t failed_bytes = 0;

int64_t minidl_failed_alloc_bytes(void)
{
    int64_t bytes;
#pragma omp atomic read
    bytes = failed_bytes;
    return bytes;
}

int64_t minidl_set_alloc_limit(int64_t bytes)
{
    int64_t old = alloc_limit;
    alloc_limit = bytes;
    return old;
}

void *minidl_alloc(size_t bytes)
{
    size_t rounded = (bytes + 63) / 64 * 64;
    if (rounded == 0)
        rounded = 64;
    void *p = NULL;
    if (alloc_limit < 0 || (int64_t)rounded <= alloc_limit)
        p = aligned_alloc(64, rounded);
    if (!p) {
#pragma omp atomic write
        failed_bytes = (int64_t)rounded;
    }
    return p;
}
