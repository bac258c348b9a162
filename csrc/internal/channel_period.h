/* Channel-periodic loops over (pixels, c) images with few channels.
 *
 * Per-channel work on an RGB image (c = 3) written as `for pixel: for k < c` runs an inner
 * loop 3 long, which the compiler neither vectorizes nor unrolls (c is not a constant). Read
 * the same memory as rows of PERIOD = 16 * c floats instead: element j of every row belongs to
 * channel j % c, so a per-channel statistic is kept in PERIOD lanes (folded to c at the end)
 * and a per-channel parameter is spread to PERIOD lanes once; the inner loop is then a plain
 * unit-stride loop over PERIOD elements. A last partial row (the image's size need not be a
 * multiple of PERIOD) still starts on channel 0, so the same lane pattern covers it.
 * Used where c < CHANNEL_PERIOD_MAX_C; more channels make the channel loop long enough as it is. */
#ifndef MINIDL_CHANNEL_PERIOD_H
#define MINIDL_CHANNEL_PERIOD_H

#include <stdint.h>

#define CHANNEL_PERIOD_MAX_C 16
#define CHANNEL_PERIOD_MAX (16 * CHANNEL_PERIOD_MAX_C)

static inline int channel_period(int c) { return 16 * c; }

/* lanes[j] = per_channel[j % c] for j < period */
static inline void channel_period_spread(float *lanes, const float *per_channel, int c, int period)
{
    for (int j = 0; j < period; j++) lanes[j] = per_channel[j % c];
}

#endif
