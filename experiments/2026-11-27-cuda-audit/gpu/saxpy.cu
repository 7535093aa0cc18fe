extern "C" __global__ void saxpy(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
    const int base = (blockIdx.x * blockDim.x + threadIdx.x) * ITEMS;
    for (int i = 0; i < ITEMS; ++i)
        if (base + i < n)
            y[base + i] = a * x[base + i] + y[base + i];
}
