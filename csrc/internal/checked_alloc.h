#ifndef MINIDL_CHECKED_ALLOC_H
#define MINIDL_CHECKED_ALLOC_H

#include <stddef.h>

/* 64-byte aligned memory (free it with free()), or NULL when it cannot be had; then the
 * size is kept for minidl_failed_alloc_bytes() and the caller returns MINIDL_OUT_OF_MEMORY
 * (status.h). Never aborts: a kernel's failure becomes a Python MemoryError naming the op. */
void *minidl_alloc(size_t bytes);

static inline float *minidl_alloc_floats(size_t count)
{
    return (float *)minidl_alloc(count * sizeof(float));
}

#endif
