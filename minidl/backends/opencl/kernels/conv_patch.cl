// The tunables, derived sizes and input-patch staging of the direct tiled convolutions
// (conv_direct.cl, conv_direct_filter.cl include this). conv_direct.py passes every value as a
// -D define, per layer: the window (KH, KW, SH, SW) and the tile (its parameter set, the tuner's
// candidates) are compile-time constants, so tap loops unroll and every division or modulo
// below is by a constant (a multiply and shift, no divide instruction).
//
// A work-group owns a TOH x TOW tile of output pixels of one image. Per channel chunk of CK
// channels it stages the input patch those pixels read, PH x PW x CK with the halo
// (PH = (TOH - 1) SH + KH), in local memory once; every kernel tap then reads it there. An
// im2col-shaped product loads each input element once per tap (KH KW times); this loads it
// about (1 + (KH - SH) / (TOH SH)) (1 + (KW - SW) / (TOW SW)) times (the halo), so the input
// side of the traffic nearly vanishes and the filters' side (reloaded per pixel tile) is left:
// 2 / (TOH TOW) bytes per flop plus the patch's share (traffic.py holds the formulas).

#ifndef KH
#define KH 3        // kernel rows
#endif
#ifndef KW
#define KW 3        // kernel columns
#endif
#ifndef SH
#define SH 1        // stride along rows
#endif
#ifndef SW
#define SW 1        // stride along columns
#endif
#ifndef TOH
#define TOH 8       // output rows of a work-group's pixel tile
#endif
#ifndef TOW
#define TOW 8       // output columns of the pixel tile
#endif
#ifndef TF
#define TF 64       // output channels (filters) of a work-group
#endif
#ifndef CK
#define CK 8        // input channels staged per step (at most the layer's channels)
#endif
#ifndef WPF
#define WPF 4       // filters per work-item (register block), dividing TF
#endif

#define TAPS (KH * KW)
#define PH ((TOH - 1) * SH + KH)   // rows of the staged input patch
#define PW ((TOW - 1) * SW + KW)   // columns of the staged input patch
#define PIX (TOH * TOW)            // output pixels of a tile
#define RTF (TF / WPF)             // work-group extent along the filters (local id 0)

// The incremental walk of a work-item over the elements l = tid, tid + THREADS, ... of a box
// (i2, i1, i0) of extents (.., N1, N0), i0 fastest: (i2, i1, i0) of l + THREADS from those of l
// with adds and one carry per digit, no division (the digits of THREADS are constants).
#define BOX_START(N1, N0, i2, i1, i0)                                          \
    int i0 = tid % (N0), i1 = (tid / (N0)) % (N1), i2 = tid / ((N0) * (N1));
#define BOX_STEP(N1, N0, i2, i1, i0)                                           \
    i0 += THREADS % (N0);                                                      \
    if (i0 >= (N0)) { i0 -= (N0); ++i1; }                                      \
    i1 += (THREADS / (N0)) % (N1);                                             \
    if (i1 >= (N1)) { i1 -= (N1); ++i2; }                                      \
    i2 += THREADS / ((N0) * (N1));

// patch[(r * PW + s) * CK + c] = in(b, y0 + r, x0 + s, c0 + c) (in is (., H, W, C)) for the
// rows r < rows and columns s < cols that the tile's valid pixels read, inside the image and for
// c0 + c < C; 0 elsewhere, with no load (padding, a ragged edge tile, the last channel chunk,
// and the rows and columns a stride larger than the kernel skips).
#define STAGE_PATCH(patch, in, b, y0, x0, rows, cols, c0, H, W, C)                         \
    {                                                                                       \
        __global const float *in_b_ = (in) + (size_t)(b) * (H) * (W) * (C) + (c0);         \
        BOX_START(PW, CK, r_, s_, c_)                                                       \
        for (int l_ = tid; l_ < PH * PW * CK; l_ += THREADS) {                              \
            const int y_ = (y0) + r_, x_ = (x0) + s_;                                       \
            const int needed_ = r_ < (rows) && s_ < (cols) && (SH <= KH || r_ % SH < KH)    \
                                && (SW <= KW || s_ % SW < KW);                              \
            patch[l_] = (needed_ && y_ >= 0 && y_ < (H) && x_ >= 0 && x_ < (W)              \
                         && (c0) + c_ < (C))                                                \
                            ? in_b_[((size_t)y_ * (W) + x_) * (C) + c_] : 0.0f;             \
            BOX_STEP(PW, CK, r_, s_, c_)                                                    \
        }                                                                                   \
    }
