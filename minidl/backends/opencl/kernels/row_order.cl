// Ops along the rows of a (rows, n) float tensor (minidl/backends/base.py: argsort_rows,
// scan_rows), the OpenCL twins of csrc/row_order.c.
//
// argsort_rows runs one work-item per element: its rank in its row is the number of elements
// that sort before it (a smaller value, or an equal one at a lower position; NaN last), and it
// writes its position at that rank. O(n) work per element, all of it parallel, no scratch, and
// stable by construction. scan_rows runs one work-item per row, one pass along it.
//
// No tunables: both take the 1-D launch of the backend's tensor ops; is_nan is common.cl's.

// a sorts before b: ascending, every NaN after every number
int sorts_before(const float a, const float b)
{
    return a < b || (is_nan(b) && !is_nan(a));
}

__kernel void argsort_rows(__global int *out, __global const float *x, const int rows,
                           const int n)
{
    const long i = get_global_id(0);
    if (i >= (long)rows * n) return;
    const long r = i / n;
    const int at = (int)(i - r * n);
    __global const float *row = x + r * n;
    const float v = row[at];
    int rank = 0;
    for (int j = 0; j < n; j++) {
        const float w = row[j];
        rank += sorts_before(w, v) || (j < at && !sorts_before(v, w));
    }
    out[r * n + rank] = at;
}

// op 0: running sums, op 1: running products (out may alias x)
__kernel void scan_rows(__global float *out, __global const float *x, const int rows,
                        const int n, const int op)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    __global const float *in = x + (long)r * n;
    __global float *o = out + (long)r * n;
    float acc = op == 0 ? 0.0f : 1.0f;
    for (int k = 0; k < n; k++) {
        acc = op == 0 ? acc + in[k] : acc * in[k];
        o[k] = acc;
    }
}
