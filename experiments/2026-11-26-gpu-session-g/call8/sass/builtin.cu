#define ROWS 2
#define VW 4
#define STENCIL_VARIANT direct
#define STENCIL_ACCESS vector
#define ELEM float
#define OUT float
#define NORTH 1
#define SOUTH 1
#define EAST 1
#define WEST 1
#define NEAREST 1
#define PAD 0
#define DIRECT 1
#define VEC 1
#define VN 4
#define ALIGNED 1
#define OUT_VN 4
#define OUT_ALIGNED 1

#define KERNEL extern "C" __global__
#define DEVICE_FN __device__ static inline
#define GLOBAL
#define LOCAL __shared__
#define LOCAL_PTR
#define LOCAL_PARAM(T, name)
#define LOCAL_DECL(T, name) extern __shared__ unsigned char perfport_smem_[]; T* name = (T*)perfport_smem_;
#define BARRIER() __syncthreads()
__device__ static inline int perfport_dim_(unsigned x, unsigned y, unsigned z, int d) {
    return d == 0 ? (int)x : (d == 1 ? (int)y : (int)z);
}
#define LID(d) perfport_dim_(threadIdx.x, threadIdx.y, threadIdx.z, d)
#define GROUP(d) perfport_dim_(blockIdx.x, blockIdx.y, blockIdx.z, d)
#define LSIZE(d) perfport_dim_(blockDim.x, blockDim.y, blockDim.z, d)
#define NGROUPS(d) perfport_dim_(gridDim.x, gridDim.y, gridDim.z, d)
#define GID(d) (GROUP(d) * LSIZE(d) + LID(d))
#define RESTRICT __restrict__
#define CONSTANT_DECL(T, name, n) __constant__ T name[n];
#define CONSTANT_PARAM(T, name)
#define LDG(p) __ldg(p)
#line 1

// Stencil with ROWS x VW cells per work-item. Defines: ELEM, OUT, NORTH, SOUTH, EAST, WEST,
// NEAREST, PAD, ROWS, VW, DIRECT (1: neighbours from global memory, 0: a local-memory tile),
// VEC (1: each run of VW cells moves as vectors of VN inputs or OUT_VN outputs), ALIGNED and
// OUT_ALIGNED (every row starts on a vector boundary, so a run is aligned vector accesses).
DEVICE_FN ELEM load_cell(GLOBAL const ELEM* in, int x, int y, int width, int height) {
#if NEAREST
    x = min(max(x, 0), width - 1);
    y = min(max(y, 0), height - 1);
    return in[y * width + x];
#else
    return (x < 0 || y < 0 || x >= width || y >= height) ? (ELEM)(PAD) : in[y * width + x];
#endif
}

// The customising function three times: over the tile, over the input inside the matrix
// (no clamping, so neighbouring cells share loads) and over the input at its borders.
#define GET(dx, dy) src[(cy + (dy)) * stride + cx + (dx)]
DEVICE_FN OUT cell_local(LOCAL_PTR const ELEM* src, int stride, int cx, int cy) {
    ELEM sum = GET(0, 0);
    for (int dy = -NORTH; dy <= SOUTH; ++dy)
        if (dy != 0)
            sum += GET(0, dy);
    for (int dx = -WEST; dx <= EAST; ++dx)
        if (dx != 0)
            sum += GET(dx, 0);
    const int count = 1 + NORTH + SOUTH + WEST + EAST;
    // (ELEM)0.5 is zero only for integer types: the branch folds at compile time.
    return (OUT)((ELEM)0.5 != (ELEM)0 ? sum * ((ELEM)1 / (ELEM)count) : sum / (ELEM)count);
}
DEVICE_FN OUT cell_inside(GLOBAL const ELEM* RESTRICT src, int stride, int cx, int cy) {
    ELEM sum = GET(0, 0);
    for (int dy = -NORTH; dy <= SOUTH; ++dy)
        if (dy != 0)
            sum += GET(0, dy);
    for (int dx = -WEST; dx <= EAST; ++dx)
        if (dx != 0)
            sum += GET(dx, 0);
    const int count = 1 + NORTH + SOUTH + WEST + EAST;
    // (ELEM)0.5 is zero only for integer types: the branch folds at compile time.
    return (OUT)((ELEM)0.5 != (ELEM)0 ? sum * ((ELEM)1 / (ELEM)count) : sum / (ELEM)count);
}
#undef GET
#define GET(dx, dy) load_cell(src, cx + (dx), cy + (dy), stride, height)
DEVICE_FN OUT cell_edge(GLOBAL const ELEM* RESTRICT src, int stride, int height, int cx, int cy) {
    ELEM sum = GET(0, 0);
    for (int dy = -NORTH; dy <= SOUTH; ++dy)
        if (dy != 0)
            sum += GET(0, dy);
    for (int dx = -WEST; dx <= EAST; ++dx)
        if (dx != 0)
            sum += GET(dx, 0);
    const int count = 1 + NORTH + SOUTH + WEST + EAST;
    // (ELEM)0.5 is zero only for integer types: the branch folds at compile time.
    return (OUT)((ELEM)0.5 != (ELEM)0 ? sum * ((ELEM)1 / (ELEM)count) : sum / (ELEM)count);
}
#undef GET

#if VEC
#define PASTE_(a, b) a##b
#define PASTE(a, b) PASTE_(a, b)
#define VT PASTE(ELEM, VN)
#define OVT PASTE(OUT, OUT_VN)
#define WIN_W (WEST + VW + EAST)
// A fourth time over a window of registers: the work-item's runs and their borders.
#define GET(dx, dy) win[cy + (dy)][cx + (dx)]
DEVICE_FN OUT cell_window(ELEM win[][WIN_W], int cx, int cy) {
    ELEM sum = GET(0, 0);
    for (int dy = -NORTH; dy <= SOUTH; ++dy)
        if (dy != 0)
            sum += GET(0, dy);
    for (int dx = -WEST; dx <= EAST; ++dx)
        if (dx != 0)
            sum += GET(dx, 0);
    const int count = 1 + NORTH + SOUTH + WEST + EAST;
    // (ELEM)0.5 is zero only for integer types: the branch folds at compile time.
    return (OUT)((ELEM)0.5 != (ELEM)0 ? sum * ((ELEM)1 / (ELEM)count) : sum / (ELEM)count);
}
#undef GET

// VW cells from p: aligned vector loads where rows start on a vector boundary, else OpenCL's
// vloadn (element alignment suffices) or element loads (CUDA).
DEVICE_FN void load_run(ELEM* dst, GLOBAL const ELEM* RESTRICT p) {
#pragma unroll
    for (int k = 0; k < VW / VN; ++k) {
#if ALIGNED || defined(__OPENCL_VERSION__)
#if ALIGNED
        const VT v = ((GLOBAL const VT*)p)[k];
#else
        const VT v = PASTE(vload, VN)(k, p);
#endif
        dst[k * VN] = v.x;
        dst[k * VN + 1] = v.y;
#if VN == 4
        dst[k * VN + 2] = v.z;
        dst[k * VN + 3] = v.w;
#endif
#else
        for (int j = 0; j < VN; ++j)
            dst[k * VN + j] = p[k * VN + j];
#endif
    }
}

DEVICE_FN void store_run(GLOBAL OUT* RESTRICT p, const OUT* src) {
#pragma unroll
    for (int k = 0; k < VW / OUT_VN; ++k) {
#if OUT_ALIGNED || defined(__OPENCL_VERSION__)
        OVT v;
        v.x = src[k * OUT_VN];
        v.y = src[k * OUT_VN + 1];
#if OUT_VN == 4
        v.z = src[k * OUT_VN + 2];
        v.w = src[k * OUT_VN + 3];
#endif
#if OUT_ALIGNED
        ((GLOBAL OVT*)p)[k] = v;
#else
        PASTE(vstore, OUT_VN)(v, k, p);
#endif
#else
        for (int j = 0; j < OUT_VN; ++j)
            p[k * OUT_VN + j] = src[k * OUT_VN + j];
#endif
    }
}

// Direct loads inside the matrix: the ROWS + NORTH + SOUTH input rows of the runs and their
// borders, each loaded once into registers, then each output run stored at once.
DEVICE_FN void direct_vector(GLOBAL const ELEM* RESTRICT in, GLOBAL OUT* RESTRICT out, int width,
                             int x, int y) {
    ELEM win[ROWS + NORTH + SOUTH][WIN_W];
#pragma unroll
    for (int r = 0; r < ROWS + NORTH + SOUTH; ++r) {
        GLOBAL const ELEM* row = in + (y - NORTH + r) * width + x;
#pragma unroll
        for (int k = 0; k < WEST; ++k)
            win[r][k] = row[k - WEST];
        load_run(win[r] + WEST, row);
#pragma unroll
        for (int k = 0; k < EAST; ++k)
            win[r][WEST + VW + k] = row[VW + k];
    }
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        OUT res[VW];
#pragma unroll
        for (int j = 0; j < VW; ++j)
            res[j] = cell_window(win, WEST + j, NORTH + i);
        store_run(out + (y + i) * width + x, res);
    }
}

// The tile's middle columns, a run per work-item slot, as vectors where the run lies in the
// matrix (runs start on vector boundaries); its WEST and EAST columns one cell at a time.
DEVICE_FN void fill_tile_vector(GLOBAL const ELEM* RESTRICT in, LOCAL_PTR ELEM* tile, int width,
                                int height, int x0, int y0, int tile_w, int tile_h) {
    const int lx = LID(0), ly = LID(1), wc = LSIZE(0), wr = LSIZE(1);
    for (int i = ly * wc + lx; i < wc * tile_h; i += wc * wr) {
        const int r = i / wc, c = WEST + (i % wc) * VW, gx = x0 + c, gy = y0 + r;
        LOCAL_PTR ELEM* dst = tile + r * tile_w + c;
        if (gy >= 0 && gy < height && gx + VW <= width) {
            ELEM run[VW];
            load_run(run, in + gy * width + gx);
#pragma unroll
            for (int j = 0; j < VW; ++j)
                dst[j] = run[j];
        } else {
            for (int j = 0; j < VW; ++j)
                dst[j] = load_cell(in, gx + j, gy, width, height);
        }
    }
#if WEST + EAST > 0
    for (int i = ly * wc + lx; i < (WEST + EAST) * tile_h; i += wc * wr) {
        const int r = i / (WEST + EAST), k = i % (WEST + EAST);
        const int c = k < WEST ? k : wc * VW + k;
        tile[r * tile_w + c] = load_cell(in, x0 + c, y0 + r, width, height);
    }
#endif
}
#endif

KERNEL void stencil(GLOBAL const ELEM* RESTRICT in, GLOBAL OUT* RESTRICT out, int width, int height
                    LOCAL_PARAM(ELEM, tile)) {
    const int x = GID(0) * VW, y = GID(1) * ROWS;  // this work-item's first cell
#if DIRECT
    const int inside = x >= WEST && y >= NORTH && x + VW - 1 + EAST < width
                       && y + ROWS - 1 + SOUTH < height;
    if (inside) {
#if VEC
        direct_vector(in, out, width, x, y);
#else
        for (int i = 0; i < ROWS; ++i)
            for (int j = 0; j < VW; ++j)
                out[(y + i) * width + x + j] = cell_inside(in, width, x + j, y + i);
#endif
    } else {
        for (int i = 0; i < ROWS; ++i)
            for (int j = 0; j < VW; ++j)
                if (x + j < width && y + i < height)
                    out[(y + i) * width + x + j] = cell_edge(in, width, height, x + j, y + i);
    }
#else
    LOCAL_DECL(ELEM, tile)
    const int lx = LID(0), ly = LID(1), wc = LSIZE(0), wr = LSIZE(1);
    const int tile_w = wc * VW + WEST + EAST, tile_h = wr * ROWS + NORTH + SOUTH;
    const int x0 = GROUP(0) * wc * VW - WEST, y0 = GROUP(1) * wr * ROWS - NORTH;
#if VEC
    fill_tile_vector(in, tile, width, height, x0, y0, tile_w, tile_h);
#else
    for (int i = ly * wc + lx; i < tile_w * tile_h; i += wc * wr)
        tile[i] = load_cell(in, x0 + i % tile_w, y0 + i / tile_w, width, height);
#endif
    BARRIER();
#if VEC
    if (x + VW <= width) {
        for (int i = 0; i < ROWS && y + i < height; ++i) {
            OUT res[VW];
#pragma unroll
            for (int j = 0; j < VW; ++j)
                res[j] = cell_local(tile, tile_w, lx * VW + j + WEST, ly * ROWS + i + NORTH);
            store_run(out + (y + i) * width + x, res);
        }
        return;
    }
#endif
    for (int i = 0; i < ROWS; ++i)
        for (int j = 0; j < VW; ++j)
            if (x + j < width && y + i < height)
                out[(y + i) * width + x + j] =
                    cell_local(tile, tile_w, lx * VW + j + WEST, ly * ROWS + i + NORTH);
#endif
}
