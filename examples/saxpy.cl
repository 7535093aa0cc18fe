__kernel void saxpy(__global const float* x, __global float* y, float a, int n) {
    const int base = get_global_id(0) * ITEMS;
    for (int i = 0; i < ITEMS; ++i)
        if (base + i < n)
            y[base + i] = a * x[base + i] + y[base + i];
}
