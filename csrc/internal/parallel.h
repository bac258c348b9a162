/* How the portable ops split work across OpenMP threads.
 *
 * Elementwise ops cut a tensor into blocks of MINIDL_BLOCK elements and hand contiguous runs
 * of blocks to the threads (schedule(static)); tensors smaller than MINIDL_PARALLEL_MIN run on
 * the calling thread, where forking would cost more than it saves. Row ops use the same
 * threshold on rows * columns. The ops called every step on small tensors (elementwise,
 * activations, optimizer updates) test the threshold before the parallel region rather than
 * in an OpenMP if() clause: even a one-thread region costs a few hundred nanoseconds.
 */
#ifndef MINIDL_PARALLEL_H
#define MINIDL_PARALLEL_H

#include <stdint.h>

#include "cpu_features.h"

#define MINIDL_BLOCK 8192            /* elements per block: 32 KiB of floats, an L1's worth */
#define MINIDL_PARALLEL_MIN 65536    /* elements below which an op runs on one thread */
/* The per-pixel colour kernels of the augmentation layers (a few operations per value,
 * streaming): one thread ran them faster than two up to a 128x32x32x3 batch (posterize 0.12
 * against 0.17 ms, brightness 0.13 against 0.17 ms; Xeon, 2 cores), the wake-up and the
 * second core's cache misses costing more than the work it took over. */
#define MINIDL_STREAM_PARALLEL_MIN (1 << 21)

static inline int64_t minidl_blocks(int64_t n) { return (n + MINIDL_BLOCK - 1) / MINIDL_BLOCK; }
static inline int64_t minidl_block_len(int64_t n, int64_t b)
{
    int64_t rest = n - b * MINIDL_BLOCK;
    return rest < MINIDL_BLOCK ? rest : MINIDL_BLOCK;
}
/* Rows per block so that one block holds about MINIDL_BLOCK elements (at least one row). */
static inline int64_t minidl_rows_per_block(int64_t c)
{
    return c >= MINIDL_BLOCK ? 1 : MINIDL_BLOCK / (c > 0 ? c : 1);
}

#endif
