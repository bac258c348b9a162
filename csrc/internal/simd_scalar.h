/* One-lane "vectors" (plain floats) with the names of simd_avx2.h, for kernels written once
 * in those names whose generic build is plain C (the compiler may still vectorize it). */
#ifndef MINIDL_SIMD_SCALAR_H
#define MINIDL_SIMD_SCALAR_H

#define VF_LANES 1

typedef float vf;

static inline vf vf_set1(float a) { return a; }
static inline vf vf_zero(void) { return 0.0f; }
static inline vf vf_load(const float *p) { return *p; }
static inline void vf_store(float *p, vf v) { *p = v; }
/* Never called with n in [1, VF_LANES): there is no partial one-lane vector. */
static inline vf vf_load_part(const float *p, int n, float fill) { return n > 0 ? *p : fill; }
static inline void vf_store_part(float *p, vf v, int n) { if (n > 0) *p = v; }
static inline vf vf_add(vf a, vf b) { return a + b; }
static inline vf vf_mul(vf a, vf b) { return a * b; }
static inline vf vf_fmadd(vf a, vf b, vf c) { return a * b + c; }

#endif
