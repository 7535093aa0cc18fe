// MODE 0: correct. 1: write far outside any allocation (illegal address). 2: __trap().
// 3: never ends (hung kernel) unless *stop is nonzero, which it never is.
extern "C" __global__ void faults(const float* x, float* y, volatile int* stop, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
#if MODE == 1
    if (i == 0) y[(size_t)1 << 40] = 1.0f;
#elif MODE == 2
    if (i == 0) __trap();
#elif MODE == 3
    if (i == 0) while (*stop == 0) { }
#endif
    if (i < n) y[i] = 2.0f * x[i];
}
