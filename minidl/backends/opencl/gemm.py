"""SGEMM on the device: the two kernel families, their parameter sets and the launch logic.

A parameter set is a plain dict (it is stored as JSON by the tuner):
  {"family": "direct", "RM": 8, "VW": 16, "VN": 2, "local": [1, 4]}   (kernels/gemm_direct.cl)
  {"family": "tiled", "TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 4, "VWN": 4}
                                        (kernels/gemm_tiled.cl, tunables in tile_defs.cl)
"local" is the work-group size of the direct kernel, or None to let the driver choose.
The direct family covers the leftover rows with its own kernel built with RM = 1, and the
leftover columns with a last block that stores only the valid columns (reading a zero-padded
copy of B). The tiled family masks the loads and stores of tiles that stick out of C, and
reads a transposed A or B in place (the direct family's caller transposes B first).
The runtime's profile picks the family: "cpu" the direct one, "gpu" the tiled one (and with
it the tiled convolutions of conv.py); the tuner searches that family's candidates first.
"""

# 64 x 64 tiles: 1/16 byte of global memory per flop (traffic.py); 256 work-items of 4 x 4
TILED_DEFAULT = {"family": "tiled", "TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 4, "VWN": 4}


def direct_default(vector_width):
    """The direct kernel's untuned shape for a CPU whose preferred float vector has
    `vector_width` lanes: RM x 2 accumulator vectors, leaving registers for the B vectors.
    Measured on AVX-512 PoCL, one thread, 960^3: 8 x 32 at ~215 GFLOP/s (numpy: ~120);
    12 x 32 at ~125, where the extra row pointers crowd the registers."""
    width = vector_width if vector_width in (4, 8, 16) else 4
    rows = {16: 8, 8: 6, 4: 4}[width]
    return {"family": "direct", "RM": rows, "VW": width, "VN": 2, "local": [1, 4]}


DIRECT_DEFAULT = direct_default(16)

DIRECT_KEYS = ("RM", "VW", "VN")
TILED_KEYS = ("TSM", "TSN", "TSK", "WPTM", "WPTN", "VWN")


def tiled_default(max_work_group_size):
    """TILED_DEFAULT, its register blocks grown (fewer work-items, the same 64 x 64 tile) until
    a work-group fits a device that runs at most `max_work_group_size` work-items in one."""
    params = dict(TILED_DEFAULT)
    while tiled_threads(params) > max_work_group_size and params["WPTM"] < params["TSM"]:
        key = "WPTM" if params["WPTM"] <= params["WPTN"] else "WPTN"
        params[key] *= 2
    return params


def tiled_threads(params):
    """Work-items per work-group of a tiled parameter set."""
    return (params["TSM"] // params["WPTM"]) * (params["TSN"] // params["WPTN"])


def tiled_local_bytes(params):
    """Local memory of one tiled work-group: tile_body.cl's a_tile and b_tile (one pad column each)."""
    return 4 * params["TSK"] * (params["TSM"] + params["TSN"] + 2)


RESHAPED_MAX_SIDE = 256   # the longest tile side a narrow or short product is given


def tile_for(params, rows, cols, local_limit=float("inf")):
    """The tiled parameter set for a rows x cols product: `params`, or for a product at most
    half a tile wide (a 32-filter convolution) a tile half as wide and twice as tall, or for
    one at most half a tile tall (a Dense layer on a small batch) half as tall and twice as
    wide, as often as that fits and the longer side has the work for it; the same work-items
    in other proportions. The tile stops idling on padding and loads fewer bytes per flop."""
    tile = dict(params)
    while True:
        if cols <= tile["TSN"] // 2 and rows > tile["TSM"]:
            reshaped = dict(tile, TSM=tile["TSM"] * 2, TSN=tile["TSN"] // 2)
        elif rows <= tile["TSM"] // 2 and cols > tile["TSN"]:
            reshaped = dict(tile, TSM=tile["TSM"] // 2, TSN=tile["TSN"] * 2)
        else:
            return tile
        tsm, tsn = reshaped["TSM"], reshaped["TSN"]
        if (tsm % tile["WPTM"] or tsn % tile["WPTN"] or tsn % tile["VWN"]
                or max(tsm, tsn) > RESHAPED_MAX_SIDE or tiled_local_bytes(reshaped) > local_limit):
            return tile
        tile = reshaped


def default_params(runtime):
    """The untuned choice for the runtime's profile: the register-blocked kernel for "cpu", the
    local-memory one for "gpu"."""
    if runtime.profile == "cpu":
        return direct_default(runtime.device.preferred_vector_width_float)
    return tiled_default(runtime.max_work_group_size)


def block_shape(params):
    """(rows, columns) of C covered by one launch unit of the blocked kernel."""
    if params["family"] == "direct":
        return params["RM"], params["VW"] * params["VN"]
    return params["TSM"], params["TSN"]


def check_params(params, runtime):
    """Raise ValueError when `params` cannot run on `runtime`'s device."""
    family = params.get("family")
    if family == "direct":
        if params["VW"] not in (2, 4, 8, 16):
            raise ValueError(f"gemm params {params}: VW must be 2, 4, 8 or 16")
        local = params.get("local")
        if local is not None and local[0] * local[1] > runtime.max_work_group_size:
            raise ValueError(f"gemm params {params}: local size exceeds the device's "
                             f"{runtime.max_work_group_size}")
        return
    if family == "tiled":
        tsm, tsn, tsk = params["TSM"], params["TSN"], params["TSK"]
        if tsm % params["WPTM"] or tsn % params["WPTN"] or tsn % params["VWN"]:
            raise ValueError(f"gemm params {params}: WPTM must divide TSM, WPTN and VWN TSN")
        if params["VWN"] not in (1, 2, 4, 8, 16) or tsk < 1:
            raise ValueError(f"gemm params {params}: VWN must be 1, 2, 4, 8 or 16 and TSK >= 1")
        threads = tiled_threads(params)
        if threads > runtime.max_work_group_size:
            raise ValueError(f"gemm params {params}: {threads} work-items per group exceed the "
                             f"device's {runtime.max_work_group_size}")
        if tiled_local_bytes(params) > runtime.local_mem_size:
            raise ValueError(f"gemm params {params}: tiles need {tiled_local_bytes(params)} bytes "
                             f"of local memory, the device has {runtime.local_mem_size}")
        return
    raise ValueError(f"gemm params {params}: family must be 'direct' or 'tiled'")


# Split-K: a product with few blocks of C and a long k axis (a convolution's filter gradient,
# 288 x 32 summed over 115200 rows) is cut into k slices of SPLIT_K_SLICE summed separately,
# so that every slice's panels stay in cache and every core gets work; then the slices are added.
SPLIT_K_MIN_K = 4096      # no split below this depth
SPLIT_K_MAX_BLOCKS = 256  # no split when C already has this many blocks
SPLIT_K_SLICE = 1024      # depth of one slice


def split_k_slices(blocks, k):
    """How many k slices a product with `blocks` blocks of C and depth k is cut into (1: none)."""
    if k < SPLIT_K_MIN_K or blocks >= SPLIT_K_MAX_BLOCKS:
        return 1
    return -(-k // SPLIT_K_SLICE)


class Gemm:
    """C = alpha * op(A) @ op(B) + beta * C on the device with one parameter set (the direct
    family takes B untransposed: the backend transposes a trans_b operand first). The direct family's pieces (its defines,
    B panel packing, split-K sums, work-group choice and scratch buffers) also serve the
    implicit-GEMM convolutions of conv.py, which use the same register blocks."""

    def __init__(self, runtime, params):
        check_params(params, runtime)
        self.rt = runtime
        self.params = dict(params)
        self.family = params["family"]
        self.block_rows, self.block_cols = block_shape(params)
        self._sum_slices = runtime.kernel("gemm_util.cl", "gemm_sum_slices")
        self._scratches = {}   # "b_panels", "split_k", "zeros" -> grow-only tensors
        self._tiles = {}        # product width -> tiled parameter set (tile_for)
        self._fitting = set()   # tiled kernels checked against CL_KERNEL_WORK_GROUP_SIZE

    def direct_defines(self, **extra):
        """The -D defines of the direct family's register blocks (RM, VW, VN), plus `extra`."""
        defines = {k: self.params[k] for k in DIRECT_KEYS}
        defines.update(extra)
        return defines

    @property
    def reads_transposed_b(self):
        """Whether run() takes trans_b itself (else the caller transposes b first)."""
        return self.family == "tiled"

    def tile(self, rows, cols):
        """The tiled parameter set for a rows x cols product (tile_for)."""
        key = (min(rows, 2 * RESHAPED_MAX_SIDE), min(cols, 2 * RESHAPED_MAX_SIDE))
        tile = self._tiles.get(key)
        if tile is None:
            tile = self._tiles[key] = tile_for(self.params, *key, self.rt.local_mem_size)
        return tile

    def tiled_defines(self, rows, cols, **extra):
        """The -D defines of the tiled family's tiles (tile_defs.cl) for a rows x cols product,
        plus `extra`."""
        tile = self.tile(rows, cols)
        defines = {k: tile[k] for k in TILED_KEYS}
        defines.update(extra)
        return defines

    def _blocked_kernel(self, trans_a, single_row=False, trans_b=False, shape=(1 << 30, 1 << 30)):
        if self.family == "direct":
            defines = self.direct_defines(TRANS_A=int(trans_a))
            if single_row:
                defines["RM"] = 1
            return self.rt.kernel("gemm_direct.cl", "gemm_direct", defines)
        defines = self.tiled_defines(*shape, TRANS_A=int(trans_a), TRANS_B=int(trans_b))
        return self.rt.kernel("gemm_tiled.cl", "gemm_tiled", defines)

    def launch_tiles(self, kernel, rows, cols, slices, *args):
        """Launch a tiled kernel (gemm_tiled.cl, conv_tiled.cl) over the tiles of a rows x cols
        product, `slices` split-K slices deep: one work-group of the size the kernel requires
        per tile."""
        p = self.tile(rows, cols)
        local = (p["TSN"] // p["WPTN"], p["TSM"] // p["WPTM"], 1)
        if kernel not in self._fitting:   # registers may hold a GPU kernel under the device limit
            limit = self.rt.kernel_max_group(kernel)
            if limit < local[0] * local[1]:
                raise ValueError(f"gemm params {p}: {kernel.function_name} runs at most {limit} "
                                 f"work-items per group here, the tiles need {local[0] * local[1]}")
            self._fitting.add(kernel)
        global_size = (-(-cols // p["TSN"]) * local[0], -(-rows // p["TSM"]) * local[1], slices)
        self.rt.launch(kernel, global_size, local, *args)

    def tiles(self, rows, cols):
        """How many work-group tiles cover a rows x cols product."""
        tile = self.tile(rows, cols)
        return -(-rows // tile["TSM"]) * -(-cols // tile["TSN"])

    def pack_b_panels(self, panels, b, rows, cols):
        """panels (ceil(cols / RN), rows, RN) = b (rows, cols) cut into column panels of the
        direct family's width RN, the last one zero-padded."""
        # built with the defines of the trans_a=False product: one program for both
        kernel = self.rt.kernel("gemm_direct.cl", "pack_b_panels", self.direct_defines(TRANS_A=0))
        self.rt.launch(kernel, (rows,), None, panels, b, rows, cols)

    def sum_slices(self, c, partial, slices, size, alpha, beta):
        """c (size,) = alpha * the sum of `slices` consecutive (size,) slices of partial + beta * c."""
        # groups of one work-item suit a CPU's short sums, never a GPU's warps
        local = 64 if size >= 64 * 8 or self.rt.profile == "gpu" else 1
        local = min(local, self.rt.max_work_group_size)
        self.rt.launch(self._sum_slices, (-(-size // local) * local,), (local,),
                       c, partial, slices, alpha, beta, size)

    def zeros(self, size):
        """A scratch run of at least `size` zeros (the implicit convolutions' padding taps read it)."""
        held = self._scratches.get("zeros")
        if held is None or held.size < size:
            held = self.scratch("zeros", size)
            fill = self.rt.kernel("elementwise.cl", "fill_float")
            self.rt.launch(fill, (held.size,), None, held, 0.0, held.size)
        return held

    def prepare(self):
        """Build every program (trans_a, and for the tiled family trans_b, False and True) now
        rather than on the first call."""
        for trans_a in (False, True):
            self._blocked_kernel(trans_a)
            if self.family == "direct":
                self._blocked_kernel(trans_a, single_row=True)
            else:
                self._blocked_kernel(trans_a, trans_b=True)

    def direct_local_size(self, global_size):
        """The configured work-group size if it divides the global size, else None (the driver
        chooses: on PoCL that beats groups of one work-item, which pay a per-group overhead)."""
        local = self.params.get("local")
        if not local or global_size[0] % local[0] or global_size[1] % local[1]:
            return None
        return tuple(local)

    def scratch(self, name, size):
        """A grow-only scratch tensor of at least `size` floats, kept between calls."""
        held = self._scratches.get(name)
        if held is None or held.size < size:
            held = self.rt.alloc((size,))
            self._scratches[name] = held
        return held

    def run(self, c, a, b, m, n, k, trans_a, alpha, beta, trans_b=False):
        """c (m, n) = alpha * op(a) @ op(b) + beta * c; a is (m, k), or (k, m) when trans_a; b is
        (k, n), or (n, k) when trans_b (the tiled family only: see reads_transposed_b)."""
        alpha, beta = float(alpha), float(beta)
        if m == 0 or n == 0:
            return
        if self.family == "tiled":
            self._launch_tiled(c, a, b, m, n, k, trans_a, trans_b, alpha, beta)
            return
        if trans_b:
            raise ValueError("gemm: the direct family reads b untransposed (transpose it first)")
        col_blocks = -(-n // self.block_cols)
        if n != self.block_cols and k:  # else b (k, RN) is its own single panel
            panels = self.scratch("b_panels", col_blocks * k * self.block_cols)
            self.pack_b_panels(panels, b, k, n)
            b = panels
        slices = split_k_slices(max(1, m // self.block_rows) * col_blocks, k)
        if slices == 1:
            self._launch_direct(c, a, b, m, n, k, trans_a, alpha, beta, k, 0, 1)
            return
        k_slice = -(-k // slices)
        partial = self.scratch("split_k", slices * m * n)
        self._launch_direct(partial, a, b, m, n, k, trans_a, 1.0, 0.0, k_slice, m * n, slices)
        self.sum_slices(c, partial, slices, m * n, alpha, beta)

    def _launch_direct(self, c, a, b_panels, m, n, k, trans_a, alpha, beta, k_slice,
                       c_slice_stride, slices):
        """The direct kernel over all of C, or over `slices` k slices (z of the launch)."""
        lda = m if trans_a else k
        rows = (m // self.block_rows) * self.block_rows
        col_blocks = -(-n // self.block_cols)
        args = (k, lda, n, alpha, beta, k_slice, c_slice_stride)
        if rows:
            global_size = (col_blocks, rows // self.block_rows)
            local = self.direct_local_size(global_size)
            if local is not None and slices > 1:
                local = local + (1,)
            self.rt.launch(self._blocked_kernel(trans_a), _with_slices(global_size, slices),
                           local, c, a, b_panels, 0, n, *args)
        if rows < m:  # leftover rows, one per work-item, still vectorized along n
            self.rt.launch(self._blocked_kernel(trans_a, single_row=True),
                           _with_slices((col_blocks, m - rows), slices), None,
                           c, a, b_panels, rows, n, *args)

    def _launch_tiled(self, c, a, b, m, n, k, trans_a, trans_b, alpha, beta):
        """The tiled kernel over ceil(m / TSM) x ceil(n / TSN) tiles (it masks ragged ones),
        split along k when there are few tiles and k is long (as the direct family)."""
        lda = m if trans_a else k
        ldb = k if trans_b else n
        kernel = self._blocked_kernel(trans_a, trans_b=trans_b, shape=(m, n))
        slices = split_k_slices(self.tiles(m, n), k)
        if slices == 1:
            self.launch_tiles(kernel, m, n, 1, c, a, b, m, n, k, lda, ldb, n, alpha, beta, k, 0)
            return
        k_slice = -(-k // slices)
        partial = self.scratch("split_k", slices * m * n)
        self.launch_tiles(kernel, m, n, slices, partial, a, b, m, n, k, lda, ldb, n, 1.0, 0.0,
                          k_slice, m * n)
        self.sum_slices(c, partial, slices, m * n, alpha, beta)


def _with_slices(size, slices):
    """A 2-D global size, made 3-D (z = k slice) when a product is split along k."""
    return size if slices == 1 else tuple(size) + (slices,)


class GemmOps:
    """Mixin of OpenCLBackend (backend.py, which provides gemm_engine, _scratch_tensor and rt):
    the gemm section of the contract (contract/gemm.py checked the shapes and the precision)."""

    def _gemm(self, out, a, b, alpha, beta, trans_a, trans_b, precision, m, n, k):
        # low precision: rounded operands, then the float32 kernels (no bf16 storage kernel yet)
        a, b = self._rounded("gemm", "a", a, precision), self._rounded("gemm", "b", b, precision)
        engine = self.gemm_engine
        if trans_b and not engine.reads_transposed_b:
            b = self._transpose_into(self._scratch_tensor("gemm_b_transposed", (k, n)), b)
            trans_b = False
        engine.run(out, a, b, m, n, k, trans_a, alpha, beta, trans_b)

    def _transpose_into(self, out, x):
        """out (cols, rows) = x (rows, cols).T on the device; returns out."""
        rows, cols = x.shape
        tile = 16
        while tile > 1 and tile * tile > self.rt.max_work_group_size:
            tile //= 2
        global_size = (-(-cols // tile) * tile, -(-rows // tile) * tile)
        kernel = self.rt.kernel("gemm_util.cl", "transpose", {"TILE": tile})
        self.rt.launch(kernel, global_size, (tile, tile), out, x, rows, cols)
        return out
