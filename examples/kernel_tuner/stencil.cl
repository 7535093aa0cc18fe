/* Five-point stencil: each interior cell of a width x height grid (row-major) becomes the
 * mean of itself and its four neighbours. Border cells are not written, which is why the
 * output must start as a copy of the input. One work-item per cell; the work-group shape
 * (block_size_x, block_size_y) is what is tuned, so the source needs no parameter. */
__kernel void stencil_kernel(__global float* x_new, __global const float* x_old,
                             int width, int height) {
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x < 1 || y < 1 || x > width - 2 || y > height - 2)
        return;  /* a border cell, or padding to whole work-groups */
    const int c = y * width + x;
    x_new[c] = (x_old[c] + x_old[c - 1] + x_old[c + 1] + x_old[c - width] + x_old[c + width])
               / 5.0f;
}
