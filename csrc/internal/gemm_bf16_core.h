/* The bf16 GEMM driver shared by minidl_gemm_bf16 and the bf16 convolutions (gemm_bf16.c,
 * conv_bf16.c): C = op(A) op(B) with A and B read as float32 through a "source", rounded to
 * bfloat16 (nearest even) while being packed into AMX's layouts, accumulated in float32 tiles,
 * and handed block by block to a "writer" that stores, adds or scatters the result.
 *
 * Only the micro-kernel and the float -> bf16 conversions are AMX / AVX512_BF16 code
 * (gemm_bf16_ukernel_amx.c); the loops and the sources are portable C. */
#ifndef MINIDL_GEMM_BF16_CORE_H
#define MINIDL_GEMM_BF16_CORE_H

#include <stdint.h>

#include "../window.h"

/* The micro-kernel's block of C: 2 x 2 tiles of 16 x 16 float32. */
#define BF16_MR 32
#define BF16_NR 32
/* K is packed in steps of 32 bf16 (one 64-byte tile row of A). */
#define BF16_KSTEP 32

/* A float32 matrix as the packers read it: row r, columns c0 .. c0 + count. */
struct bf16_source {
    void (*row)(const struct bf16_source *src, float *dst, int64_t r, int64_t c0, int64_t count);
    /* The same row converted to bf16 straight into a packed row (zeros from count to padded),
     * or NULL: the packer then converts what row() wrote. */
    void (*pack_row)(const struct bf16_source *src, uint16_t *dst, int64_t r, int64_t c0, int64_t count,
                     int64_t padded);
    const float *data;                   /* a matrix (row stride ld), or the image of an im2col */
    int64_t ld;
    const struct minidl_window *window;  /* im2col: rows are output pixels, columns (ky, kx, c) */
};

void bf16_source_matrix(struct bf16_source *src, const float *data, int64_t ld, int trans);
void bf16_source_im2col(struct bf16_source *src, const float *x, const struct minidl_window *s);

/* Receives the float32 result of one micro-kernel block: block (BF16_MR x BF16_NR, row stride
 * BF16_NR) holds C[i0 .. i0 + mb, j0 .. j0 + nb] of the K range just swept; first says it is
 * the first K range (later ones add). */
struct bf16_writer {
    void (*write)(const struct bf16_writer *w, const float *block, int64_t i0, int64_t j0, int mb, int nb,
                  int first);
    float *c;
    int64_t ldc;
    float alpha, beta;
    const float *bias;                   /* (n,) added with the first K range, or NULL */
    const struct minidl_window *window;  /* col2im: rows are output pixels, columns (ky, kx, c) */
};

/* c[i, j] = alpha * acc + beta * c (+ bias[j]); transposed: c[j, i]. beta == 0 never reads c. */
void bf16_writer_matrix(struct bf16_writer *w, float *c, int64_t ldc, float alpha, float beta,
                        const float *bias, int transposed);

/* One thread's part of the product: rows [m0, m1) of C, columns [n0, n1), inner indices
 * [k0, k1). Runs the AMX tiles on the calling thread (loads its tile config, releases it).
 * Returns MINIDL_OK or MINIDL_OUT_OF_MEMORY. */
int bf16_gemm_run(const struct bf16_writer *w, const struct bf16_source *a, const struct bf16_source *b,
                  int64_t m0, int64_t m1, int64_t n0, int64_t n1, int64_t k0, int64_t k1);

/* 1 when bf16_gemm_run may be called: AMX active and the CPU converts with AVX512_BF16. */
int bf16_gemm_native(void);

/* The stride-1 forward convolution without im2col (conv_bf16_implicit.c): whether it applies,
 * and the convolution (weight (KH, KW, C, F); MINIDL_OK or MINIDL_OUT_OF_MEMORY). */
int bf16_conv_implicit_ok(const struct minidl_window *s);
int bf16_conv_forward_implicit(float *out, const float *x, const float *weight, const float *bias,
                               const struct minidl_window *s);

/* The stride-1 kernel gradient without im2col (conv_bf16_implicit.c). */
int bf16_conv_filter_implicit_ok(const struct minidl_window *s);
int bf16_conv_backward_filter_implicit(float *dweight, const float *dout, const float *x,
                                       const struct minidl_window *s);

/* Its copies' geometry: image_t is x as (N, C, HP, WP) bf16 (zero-padded channel planes);
 * output pixel q = oy * WP + ox of an image (ox < OW real, the rest zeros in dout_pairs) reads
 * plane position q + ky * DH * WP + kx * DW. dout_pairs is dout as (N, QP / 2, FP, 2) bf16:
 * pixel pairs interleaved, QP = OH * WP rounded up to 32, zeros past OW and F. */
struct bf16_filter_geometry {
    int64_t n, hp, wp, qp, c, fp, dh, dw;
};

/* The AMX pieces (gemm_bf16_ukernel_amx.c). */
void bf16_amx_tile_config(void);
void bf16_amx_tile_release(void);
/* block (32 x 32 float32, row stride 32) = a (32 rows x kp bf16, row stride kp) times the two
 * 16-column VNNI panels b0, b1 (kp / 2 rows of 16 pairs); kp a multiple of 32. */
void bf16_amx_kernel_32x32(float *block, const uint16_t *a, const uint16_t *b0, const uint16_t *b1,
                           int64_t kp);
/* The implicit convolution's micro-kernel (conv_bf16_implicit.c): block (32 x 32 float32) =
 * 32 output pixels (16 from a0, 16 from a1, pixel_stride bf16 apart) x 32 filters. Window row r
 * of a pixel starts row_offsets[r] bf16 after its pointer and holds row_len (a multiple of 32)
 * bf16, matching rows r * row_len .. of the VNNI panels b0, b1. */
void bf16_amx_kernel_window_32x32(float *block, const uint16_t *a0, const uint16_t *a1, int64_t pixel_stride,
                                  const int64_t *row_offsets, int64_t rows, int64_t row_len,
                                  const uint16_t *b0, const uint16_t *b1);
/* block (32 x 32 float32) = dweight[(ky, kx, c0 .. c0 + 32), f0 .. f0 + 32], summed over the
 * output pixels of images [n0, n1): A tiles straight from image_t (16 channels x 32 pixels), B
 * from dout_pairs. */
void bf16_amx_kernel_filter_32x32(float *block, const uint16_t *image_t, const uint16_t *dout_pairs,
                                  const struct bf16_filter_geometry *g, int64_t ky, int64_t kx, int64_t c0,
                                  int64_t f0, int64_t n0, int64_t n1);
/* dst[c * dst_stride + r] = bf16(src[r * src_stride + c]) for r < rows, c < cols: a transposing
 * conversion (gathers 16 rows at a time). */
void bf16_convert_columns(uint16_t *dst, int64_t dst_stride, const float *src, int64_t src_stride,
                          int64_t rows, int64_t cols);
/* c[i, j] = alpha * block[i, j] + beta * c[i, j] (+ bias[j]) for i < mb, j < nb; beta == 0
 * never reads c; bias may be NULL. */
void bf16_store_block(float *c, int64_t ldc, const float *block, int mb, int nb, float alpha, float beta,
                      const float *bias);
/* dst[0 .. padded) = bf16(src[0 .. count)), zeros after count; writes nothing past padded. */
void bf16_convert_row(uint16_t *dst, const float *src, int64_t count, int64_t padded);
/* dst[2j] = bf16(r0[j]), dst[2j + 1] = bf16(r1[j]) for j < 16 (zeros from count on); r1 may be
 * NULL (zeros): one row of a VNNI panel. */
void bf16_interleave_16(uint16_t *dst, const float *r0, const float *r1, int count);

#endif
