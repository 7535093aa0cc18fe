// Two-stage reduction: each work-group writes its partial sum (how many there are depends on
// the work-group size), and adds it to the total with an integer atomic. BUG=1 corrupts the
// first group's partial sum.
__kernel void reduce(__global const int* x, __global int* partial, __global int* total, int n,
                     __local int* scratch) {
    const int lid = get_local_id(0), gid = get_global_id(0);
    scratch[lid] = gid < n ? x[gid] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        const int v = scratch[0] + (BUG && get_group_id(0) == 0 ? 1 : 0);
        partial[get_group_id(0)] = v;
        atomic_add(total, v);
    }
}

// The reference: one work-item sums everything.
__kernel void reduce_serial(__global const int* x, __global int* partial, __global int* total,
                            int n, __local int* scratch) {
    if (get_global_id(0) == 0) {
        int s = 0;
        for (int i = 0; i < n; i++)
            s += x[i];
        total[0] = s;
    }
}
