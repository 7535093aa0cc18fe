extern "C" __global__ void cerr(const float* x, float* y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
#if BAD
    if (i < n) y[i] = 2.0f * undefined_thing[i];
#else
    if (i < n) y[i] = 2.0f * x[i];
#endif
}
