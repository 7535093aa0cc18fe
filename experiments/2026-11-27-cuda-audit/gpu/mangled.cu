// No extern "C": NVRTC mangles the name (_Z7mangledPKfPfi).
__global__ void mangled(const float* x, float* y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
