/* First stage of a sum: num_blocks work-groups of block_size_x work-items each write one
 * partial sum into sum_global[group]. Each work-item strides through the input (read as
 * float, float2 or float4: `vector`), then the group adds its work-items' sums pairwise in
 * local memory. The partial sums depend on the configuration; only their total is fixed,
 * which is what the spec verifies. n must be a multiple of `vector`. */
#ifndef vector
#define vector 1
#endif
#ifndef loop_unroll_factor
#define loop_unroll_factor 0
#endif

#if vector == 1
typedef float floatv;
#define LANES(v) (v)
#elif vector == 2
typedef float2 floatv;
#define LANES(v) ((v).x + (v).y)
#elif vector == 4
typedef float4 floatv;
#define LANES(v) ((v).x + (v).y + (v).z + (v).w)
#endif

__kernel void sum_floats(__global float* sum_global, __global const floatv* x, int n) {
    __local float sums[block_size_x];
    const int lid = get_local_id(0);
    const int stride = get_global_size(0);  /* num_blocks * block_size_x */
    float sum = 0.0f;
    /* loop_unroll_factor 0 leaves the choice to the compiler (`#pragma unroll 0` is an error) */
#if loop_unroll_factor > 0
#pragma unroll loop_unroll_factor
#endif
    for (int i = get_global_id(0); i < n / vector; i += stride)
        sum += LANES(x[i]);

    sums[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int active = block_size_x / 2; active > 0; active /= 2) {
        if (lid < active)
            sums[lid] += sums[lid + active];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        sum_global[get_group_id(0)] = sums[0];
}
