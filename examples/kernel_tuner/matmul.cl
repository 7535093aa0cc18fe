/* C = A B for square WIDTH x WIDTH float matrices (row-major).
 *
 * A work-group of block_size_x x block_size_y work-items owns a block of C that is
 * block_size_x * tile_size_x columns wide and block_size_y * tile_size_y rows high; each
 * work-item accumulates tile_size_x * tile_size_y of its elements, spaced a group's width
 * (or height) apart so that neighbouring work-items touch neighbouring addresses. The
 * k dimension advances block_size_x at a time through two local tiles. The loads below
 * assume block_size_x == block_size_y * tile_size_y (the spec's restriction): the A tile
 * then has as many rows as columns, and every row of the B tile is loaded exactly once.
 * WIDTH must be a multiple of both block dimensions of C. */
#ifndef WIDTH
#define WIDTH 4096
#endif

#define BLOCK_ROWS (block_size_y * tile_size_y)
#define BLOCK_COLS (block_size_x * tile_size_x)

__kernel void matmul_kernel(__global float* C, __global const float* A,
                            __global const float* B) {
    __local float a_part[BLOCK_ROWS][block_size_x];
    __local float b_part[block_size_x][BLOCK_COLS];
    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    const int col = get_group_id(0) * BLOCK_COLS + tx;  /* this work-item's first column */
    const int row = get_group_id(1) * BLOCK_ROWS + ty;  /* and first row */

    float acc[tile_size_y][tile_size_x];
    for (int i = 0; i < tile_size_y; i++)
        for (int j = 0; j < tile_size_x; j++)
            acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < WIDTH; k0 += block_size_x) {
        for (int i = 0; i < tile_size_y; i++) {
            const int r = ty + i * block_size_y;  /* a row of the A tile, a k of the B tile */
            a_part[r][tx] = A[(row + i * block_size_y) * WIDTH + k0 + tx];
            for (int j = 0; j < tile_size_x; j++)
                b_part[r][tx + j * block_size_x] = B[(k0 + r) * WIDTH + col + j * block_size_x];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < block_size_x; k++)
            for (int i = 0; i < tile_size_y; i++)
                for (int j = 0; j < tile_size_x; j++)
                    acc[i][j] += a_part[ty + i * block_size_y][k] * b_part[k][tx + j * block_size_x];
        barrier(CLK_LOCAL_MEM_FENCE);  /* before the next step overwrites the tiles */
    }

    for (int i = 0; i < tile_size_y; i++)
        for (int j = 0; j < tile_size_x; j++)
            C[(row + i * block_size_y) * WIDTH + col + j * block_size_x] = acc[i][j];
}
