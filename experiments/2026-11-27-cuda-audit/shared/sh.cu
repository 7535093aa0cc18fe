extern "C" __global__ void sh(const float* __restrict__ x, float* __restrict__ y, const int n) {
    __shared__ float stat[4096];  // 16 KiB static
    extern __shared__ float dyn[];
    const int t = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + t;
    stat[t] = (i < n) ? x[i] : 0.0f;
    dyn[t] = 2.0f * stat[t];
    __syncthreads();
    if (i < n) y[i] = dyn[t] + stat[t];
}
