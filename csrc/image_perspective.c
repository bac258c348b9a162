/* RandomPerspective's transforms (see image_perspective.h): per sample, the homography that
 * maps the four displaced corners back to the image's corners, solved as Keras's
 * compute_homography_matrix poses it (8 equations, 8 unknowns) by Gaussian elimination with
 * partial pivoting. A few hundred flops per sample: no threads. */
#include <math.h>

#include "image_perspective.h"
#include "internal/philox.h"

static void uniforms(float u[4], int64_t s, uint32_t word, uint64_t seed)
{
    uint32_t bits[4];
    philox4x32_10(bits, (uint32_t)s, word, (uint32_t)seed, (uint32_t)(seed >> 32));
    for (int j = 0; j < 4; j++) u[j] = (float)(bits[j] >> 8) * (1.0f / 16777216.0f);
}

/* Solve a (8, 8) x = b in place (x in b); 0 when a is singular. */
static int solve8(double a[8][8], double b[8])
{
    for (int col = 0; col < 8; col++) {
        int pivot = col;
        for (int r = col + 1; r < 8; r++)
            if (fabs(a[r][col]) > fabs(a[pivot][col])) pivot = r;
        if (a[pivot][col] == 0.0) return 0;
        for (int k = 0; k < 8; k++) { double t = a[col][k]; a[col][k] = a[pivot][k]; a[pivot][k] = t; }
        double t = b[col]; b[col] = b[pivot]; b[pivot] = t;
        for (int r = col + 1; r < 8; r++) {
            double f = a[r][col] / a[col][col];
            for (int k = col; k < 8; k++) a[r][k] -= f * a[col][k];
            b[r] -= f * b[col];
        }
    }
    for (int r = 7; r >= 0; r--) {
        double v = b[r];
        for (int k = r + 1; k < 8; k++) v -= a[r][k] * b[k];
        b[r] = v / a[r][r];
    }
    return 1;
}

void minidl_image_perspective_transforms(float *transforms, float lower, float upper, float scale,
                                         uint64_t seed, int n, int height, int width)
{
    const float start[4][2] = {{0.0f, 0.0f}, {(float)(width - 1), 0.0f},
                               {0.0f, (float)(height - 1)}, {(float)(width - 1), (float)(height - 1)}};
    for (int s = 0; s < n; s++) {
        float *row = transforms + (int64_t)s * 8;   /* row is (8,) */
        float coin[4], u[8];
        uniforms(coin, s, 0, seed);
        uniforms(u, s, 1, seed);
        uniforms(u + 4, s, 2, seed);
        double a[8][8], b[8];
        int solved = 0;
        if (coin[0] < lower + (upper - lower) * coin[1] && height > 1 && width > 1) {
            for (int i = 0; i < 4; i++) {
                double sx = start[i][0], sy = start[i][1];
                /* end = start + start * f, in float32 as Keras draws it */
                double ex = start[i][0] + start[i][0] * (-0.5f * scale + scale * u[2 * i]);
                double ey = start[i][1] + start[i][1] * (-0.5f * scale + scale * u[2 * i + 1]);
                double r0[8] = {ex, ey, 1.0, 0.0, 0.0, 0.0, -sx * ex, -sx * ey};
                double r1[8] = {0.0, 0.0, 0.0, ex, ey, 1.0, -sy * ex, -sy * ey};
                for (int k = 0; k < 8; k++) { a[2 * i][k] = r0[k]; a[2 * i + 1][k] = r1[k]; }
                b[2 * i] = sx;
                b[2 * i + 1] = sy;
            }
            solved = solve8(a, b);
        }
        for (int k = 0; k < 8; k++)
            row[k] = solved ? (float)b[k] : (k == 0 || k == 4 ? 1.0f : 0.0f);
    }
}
