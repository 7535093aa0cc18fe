/* 2D convolution (as image processing writes it: a correlation) of an image with a
 * filter_width x filter_height filter. The input is the image plus a border of filter - 1
 * pixels right and below, so output pixel (x, y) weighs input pixels (x .. x + fw - 1,
 * y .. y + fh - 1).
 *
 * A work-group of block_size_x x block_size_y work-items computes a block of
 * block_size_x * tile_size_x by block_size_y * tile_size_y output pixels, each work-item
 * tile_size_x * tile_size_y of them a group's width (height) apart. The group first copies
 * the input its block needs, border included, into local memory. Sizes that are not
 * multiples of a block are handled by the bounds checks. */
#ifndef image_width
#define image_width 4096
#endif
#ifndef image_height
#define image_height 4096
#endif
#ifndef filter_width
#define filter_width 17
#endif
#ifndef filter_height
#define filter_height 17
#endif

#define input_width (image_width + filter_width - 1)
#define input_height (image_height + filter_height - 1)
#define PART_W (block_size_x * tile_size_x + filter_width - 1)
#define PART_H (block_size_y * tile_size_y + filter_height - 1)

__kernel void convolution_kernel(__global float* output, __global const float* input,
                                 __global const float* filter) {
    __local float part[PART_H][PART_W];
    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    const int x0 = get_group_id(0) * block_size_x * tile_size_x;
    const int y0 = get_group_id(1) * block_size_y * tile_size_y;

    for (int i = ty; i < PART_H; i += block_size_y)
        for (int j = tx; j < PART_W; j += block_size_x) {
            const int y = y0 + i;
            const int x = x0 + j;
            part[i][j] = (y < input_height && x < input_width) ? input[y * input_width + x] : 0.0f;
        }
    barrier(CLK_LOCAL_MEM_FENCE);

    float acc[tile_size_y][tile_size_x];
    for (int yi = 0; yi < tile_size_y; yi++)
        for (int xi = 0; xi < tile_size_x; xi++)
            acc[yi][xi] = 0.0f;

    for (int fy = 0; fy < filter_height; fy++)
        for (int fx = 0; fx < filter_width; fx++) {
            const float weight = filter[fy * filter_width + fx];
            for (int yi = 0; yi < tile_size_y; yi++)
                for (int xi = 0; xi < tile_size_x; xi++)
                    acc[yi][xi] += weight * part[ty + yi * block_size_y + fy][tx + xi * block_size_x + fx];
        }

    for (int yi = 0; yi < tile_size_y; yi++)
        for (int xi = 0; xi < tile_size_x; xi++) {
            const int y = y0 + ty + yi * block_size_y;
            const int x = x0 + tx + xi * block_size_x;
            if (y < image_height && x < image_width)
                output[y * image_width + x] = acc[yi][xi];
        }
}
