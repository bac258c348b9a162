/* Keras 3's RandomPerspective transforms (see base.Backend.image_perspective_transforms and
 * minidl/backends/numpy_ops/perspective.py, the reference). */
#ifndef MINIDL_IMAGE_PERSPECTIVE_H
#define MINIDL_IMAGE_PERSPECTIVE_H

#include <stdint.h>

/* transforms (n, 8): sample s's projective row for images height x width, from the Philox
 * words of counters (s, 0), (s, 1), (s, 2) under the seed; the identity for a sample left as
 * it is. Computed in double, stored in float. */
void minidl_image_perspective_transforms(float *transforms, float lower, float upper, float scale,
                                         uint64_t seed, int n, int height, int width);

#endif
