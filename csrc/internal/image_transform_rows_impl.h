/* image_transform_forward's row kernel written once in the vf / vi / vm names of
 * simd_avx2.h and simd_avx512.h (see image_transform_rows.h). Include after one of them. */
#ifndef MINIDL_IMAGE_TRANSFORM_ROWS_IMPL_H
#define MINIDL_IMAGE_TRANSFORM_ROWS_IMPL_H

#include "image_transform_rows.h"

enum { FILL_CONSTANT, FILL_NEAREST, FILL_WRAP, FILL_REFLECT };

/* fix_index of image_transform.c for taps i in [-size, 2 * size): the index inside the image,
 * and in *inside the lanes that read it (all but the constant mode's outside taps). */
static inline vi fix_lanes(vi i, int size, int fill_mode, vm *inside)
{
    const vi zero = vi_set1(0), n = vi_set1((uint32_t)size);
    *inside = vi_mask_in(i, zero, n);
    switch (fill_mode) {
    case FILL_NEAREST:
        *inside = vm_first(VF_LANES);
        return vi_min(vi_max(i, zero), vi_sub(n, vi_set1(1)));
    case FILL_WRAP:
        *inside = vm_first(VF_LANES);
        i = vi_select_lt(i, zero, vi_add(i, n), i);
        return vi_select_lt(i, n, i, vi_sub(i, n));
    case FILL_REFLECT:   /* d c b a | a b c d | d c b a */
        *inside = vm_first(VF_LANES);
        i = vi_select_lt(i, zero, vi_sub(vi_set1((uint32_t)-1), i), i);
        return vi_select_lt(i, n, i, vi_sub(vi_add(n, vi_sub(n, vi_set1(1))), i));
    default:
        return i;
    }
}

/* The lanes whose floor coordinate f has taps f .. f + reach inside [-size, 2 * size). */
static inline vm span_lanes(vf f, int size, int reach)
{
    return vm_and(vf_mask_ge(f, vf_set1(-(float)size)),
                  vf_mask_le(f, vf_set1((float)(2 * size - 1 - reach))));
}

/* The lanes whose floor coordinate f has both taps f, f + 1 inside [0, size). */
/* ((w00 v00 + w01 v01) + w10 v10) + w11 v11 with w = wy * wx (gy = 1 - fy, gx = 1 - fx), in
 * the scalar code's order */
static inline vf bilinear(vf gx, vf gy, vf fx, vf fy, vf v00, vf v01, vf v10, vf v11)
{
    return vf_add(vf_add(vf_add(vf_mul(vf_mul(gy, gx), v00), vf_mul(vf_mul(gy, fx), v01)),
                         vf_mul(vf_mul(fy, gx), v10)),
                  vf_mul(vf_mul(fy, fx), v11));
}

static inline vm inner_lanes(vf f, int size)
{
    return vm_and(vf_mask_ge(f, vf_zero()), vf_mask_le(f, vf_set1((float)(size - 2))));
}

/* transform_row_isa with fill_mode a constant (inlined once per mode) */
static inline __attribute__((always_inline)) void
transform_row_mode(float *row, const float *image, const float *t, int oy,
                   const struct transform_row_plan *plan, const int fill_mode)
{
    const int h = plan->h, w = plan->w, c = plan->c;
    const int64_t total = (int64_t)plan->ow * c;
    const int affine = t[6] == 0.0f && t[7] == 0.0f;
    /* the scalar code's ((t0 * ox + t1 * oy) + t2), term by term */
    const vf t0 = vf_set1(t[0]), t1oy = vf_set1(t[1] * (float)oy), t2 = vf_set1(t[2]);
    const vf t3 = vf_set1(t[3]), t4oy = vf_set1(t[4] * (float)oy), t5 = vf_set1(t[5]);
    const vf t6 = vf_set1(t[6]), t7oy = vf_set1(t[7] * (float)oy), one = vf_set1(1.0f);
    const vf fill = vf_set1(plan->fill_value);
    const vi vc = vi_set1((uint32_t)c), vw = vi_set1((uint32_t)w);
    const vi vwc = vi_set1((uint32_t)(w * c));   /* one image row of floats */
    for (int64_t e = 0; e < total; e += VF_LANES) {
        const int n = total - e < VF_LANES ? (int)(total - e) : VF_LANES;
        const vf ox = vf_load(plan->ox + e);
        const vi ch = vi_load(plan->ch + e);
        vf px = vf_add(vf_add(vf_mul(t0, ox), t1oy), t2);
        vf py = vf_add(vf_add(vf_mul(t3, ox), t4oy), t5);
        if (!affine) {
            vf k = vf_add(vf_add(vf_mul(t6, ox), t7oy), one);
            px = vf_div(px, k);
            py = vf_div(py, k);
        }
        vf result;
        vm done;
        if (plan->interpolation == 0) {
            vf qx = vf_floor(vf_add(px, vf_set1(0.5f))), qy = vf_floor(vf_add(py, vf_set1(0.5f)));
            done = vm_and(vm_first(n), vm_and(span_lanes(qx, w, 0), span_lanes(qy, h, 0)));
            vm in_x, in_y;
            vi ix = fix_lanes(vi_trunc(qx), w, fill_mode, &in_x);
            vi iy = fix_lanes(vi_trunc(qy), h, fill_mode, &in_y);
            vi at = vi_add(vi_mullo(vi_add(vi_mullo(iy, vw), ix), vc), ch);
            result = vf_gather(image, at, vm_and(done, vm_and(in_x, in_y)), fill);
        } else {
            vf x0 = vf_floor(px), y0 = vf_floor(py);
            vf fx = vf_sub(px, x0), fy = vf_sub(py, y0);
            vf gx = vf_sub(one, fx), gy = vf_sub(one, fy);
            vi tx = vi_trunc(x0), ty = vi_trunc(y0);
            const vm lanes = vm_first(n);
            const unsigned all = vm_bits(lanes);
            if ((vm_bits(vm_and(inner_lanes(x0, w), inner_lanes(y0, h))) & all) == all) {
                /* every tap inside the image (most vectors): no fill mode to apply */
                vi at = vi_add(vi_add(vi_mullo(ty, vwc), vi_mullo(tx, vc)), ch);
                vf v00 = vf_gather(image, at, lanes, fill);
                vf v01 = vf_gather(image, vi_add(at, vc), lanes, fill);
                vf v10 = vf_gather(image, vi_add(at, vwc), lanes, fill);
                vf v11 = vf_gather(image, vi_add(at, vi_add(vwc, vc)), lanes, fill);
                result = bilinear(gx, gy, fx, fy, v00, v01, v10, v11);
                if (n == VF_LANES)
                    vf_store(row + e, result);
                else
                    vf_store_part(row + e, result, n);
                continue;
            }
            done = vm_and(lanes, vm_and(span_lanes(x0, w, 1), span_lanes(y0, h, 1)));
            vm in_x0, in_x1, in_y0, in_y1;
            vi ix0 = fix_lanes(tx, w, fill_mode, &in_x0);
            vi ix1 = fix_lanes(vi_add(tx, vi_set1(1)), w, fill_mode, &in_x1);
            vi row0 = vi_mullo(fix_lanes(ty, h, fill_mode, &in_y0), vw);
            vi row1 = vi_mullo(fix_lanes(vi_add(ty, vi_set1(1)), h, fill_mode, &in_y1), vw);
            vm top = vm_and(done, in_y0), bottom = vm_and(done, in_y1);
            vf v00 = vf_gather(image, vi_add(vi_mullo(vi_add(row0, ix0), vc), ch), vm_and(top, in_x0), fill);
            vf v01 = vf_gather(image, vi_add(vi_mullo(vi_add(row0, ix1), vc), ch), vm_and(top, in_x1), fill);
            vf v10 = vf_gather(image, vi_add(vi_mullo(vi_add(row1, ix0), vc), ch), vm_and(bottom, in_x0), fill);
            vf v11 = vf_gather(image, vi_add(vi_mullo(vi_add(row1, ix1), vc), ch), vm_and(bottom, in_x1), fill);
            result = bilinear(gx, gy, fx, fy, v00, v01, v10, v11);
        }
        if (n == VF_LANES)
            vf_store(row + e, result);
        else
            vf_store_part(row + e, result, n);
        unsigned rest = vm_bits(vm_first(n)) & ~vm_bits(done);
        /* a pixel's lanes in the next vector are written again by its store, and handed over
         * again: only repeats within this vector are skipped */
        int last_done = -1;
        while (rest) {   /* far outside the image, or NaN: the scalar code, pixel by pixel */
            int lane = __builtin_ctz(rest);
            rest &= rest - 1;
            int pixel = (int)((e + lane) / c);
            if (pixel != last_done) {
                image_transform_pixel(row + (int64_t)pixel * c, image, t, pixel, oy, plan);
                last_done = pixel;
            }
        }
    }
}


static void transform_row_isa(float *row, const float *image, const float *t, int oy,
                              const struct transform_row_plan *plan)
{
    switch (plan->fill_mode) {
    case FILL_NEAREST: transform_row_mode(row, image, t, oy, plan, FILL_NEAREST); break;
    case FILL_WRAP: transform_row_mode(row, image, t, oy, plan, FILL_WRAP); break;
    case FILL_REFLECT: transform_row_mode(row, image, t, oy, plan, FILL_REFLECT); break;
    default: transform_row_mode(row, image, t, oy, plan, FILL_CONSTANT); break;
    }
}

#endif
