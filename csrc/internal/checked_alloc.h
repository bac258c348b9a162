#ifndef MINIDL_CHECKED_ALLOC_H
#define MINIDL_CHECKED_ALLOC_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* 64-byte aligned allocation that names the caller when memory runs out: a
   kernel has no way to hand an error back through the op, and a silent NULL
   would crash later somewhere unrelated. */
static inline float *checked_alloc_floats(size_t count, const char *where)
{
    size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes ? bytes : 64);
    if (!p) {
        fprintf(stderr, "minidl: %s: out of memory allocating %zu bytes\n", where, bytes);
        abort();
    }
    return p;
}

#endif
