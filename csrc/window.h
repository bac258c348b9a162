/* The geometry of a sliding 2-D window, shared by convolution, pooling and the implicit conv:
 * one struct, filled once per layer from minidl.backends.base.Window2D (minidl/backends/cpu/
 * _ffi.py's window_struct). Channels-last: the input is (n, h, w, c), the output (n, oh, ow, f)
 * with f the filters of a conv and f == c for a pooling. Output (oy, ox) covers input rows
 * oy * sh - pad_top + ky * dh (ky < kh) and columns ox * sw - pad_left + kx * dw (kx < kw);
 * positions outside the input are padding (pad_bottom / pad_right follow from the other fields,
 * and may be negative). A grouped convolution (groups > 1) splits c and f into `groups` equal
 * slices: output slice g reads input slice g only, and its weight is (kh, kw, c / groups, f).
 * Pooling uses dh = dw = groups = 1. */
#ifndef MINIDL_WINDOW_H
#define MINIDL_WINDOW_H

#include <stdint.h>

struct minidl_window {
    int64_t n, h, w, c;
    int64_t kh, kw, sh, sw;
    int64_t pad_top, pad_left;
    int64_t oh, ow, f;
    int64_t dh, dw, groups;
};

#endif
