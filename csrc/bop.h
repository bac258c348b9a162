/* larq's Bop (binary optimizer, Helwegen et al. 2019) on the latent-free binary weights of a
 * binary network. One pass over w, its moving average m and the gradient g (n elements each):
 *     m += gamma (g - m);   w = sign(-sign(w m - threshold) w),  sign(0) = +1
 * so w flips where w m > threshold (the average gradient agrees with w in sign and is large
 * enough) and is otherwise set to sign(w). NaN in w or m gives NaN (larq's sign keeps it).
 * Argument order: outputs (w and its state), inputs (g), scalars, sizes (csrc/status.h). */
#ifndef MINIDL_BOP_H
#define MINIDL_BOP_H

#include <stdint.h>

void minidl_bop_update(float *w, float *m, const float *g, float gamma, float threshold, int64_t n);
/* The plain one-element-at-a-time twin, written as larq writes the formula, for tests. */
void minidl_bop_update_reference(float *w, float *m, const float *g, float gamma, float threshold,
                                 int64_t n);

#endif
