extern "C" __global__ void gridx(unsigned int* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) { out[0] = gridDim.x; out[1] = blockDim.x; }
    if (threadIdx.x == 0) atomicAdd(&out[2], 1u);
}
