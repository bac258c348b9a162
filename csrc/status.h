/* The one error policy of the cpu backend's kernels.
 *
 * A kernel that can fail returns an enum minidl_status and writes nothing useful on failure;
 * the Python side (minidl/backends/cpu/_ffi.py, check_status) turns a nonzero status into an
 * exception naming the op: MemoryError for MINIDL_OUT_OF_MEMORY (with the bytes asked for, from
 * minidl_failed_alloc_bytes), ValueError for a sparse target outside [0, k) or an invalid size,
 * RuntimeError for a scratch buffer too small. No kernel aborts the process.
 *
 * Argument order everywhere: outputs, inputs, weights, scalar parameters, then sizes; a scratch
 * buffer and its length come last. */
#ifndef MINIDL_STATUS_H
#define MINIDL_STATUS_H

#include <stdint.h>

enum minidl_status {
    MINIDL_OK = 0,
    MINIDL_OUT_OF_MEMORY = 1,          /* a scratch allocation failed */
    MINIDL_TARGET_OUT_OF_RANGE = 2,    /* a sparse class index lies outside [0, k) */
    MINIDL_SCRATCH_TOO_SMALL = 3,      /* the caller's scratch cannot hold one thread's work */
    MINIDL_INVALID_SIZE = 4,           /* a size the kernel reads within is < 1 (an empty image) */
};

/* Bytes of the most recent allocation that failed (0 if none has). */
int64_t minidl_failed_alloc_bytes(void);

/* Make every allocation of more than `bytes` bytes fail as if memory ran out (bytes < 0: no
 * limit, the default), so that tests can reach the out-of-memory path. Returns the old limit. */
int64_t minidl_set_alloc_limit(int64_t bytes);

#endif
