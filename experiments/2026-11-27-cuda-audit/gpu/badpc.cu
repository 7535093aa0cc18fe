// MODE 4: an indirect call through a function pointer read at run time (0x10): the device
// jumps to an invalid program counter (expected: CUDA_ERROR_INVALID_PC, a sticky error that
// perfport's _STICKY list lacks). MODE 0: correct.
typedef void (*fn_t)(float*);
__device__ void nop_fn(float* p) { }
extern "C" __global__ void badpc(const float* x, float* y, const int* zero, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
#if MODE == 4
    if (i == 0) {
        fn_t f = (zero[0] == 12345) ? nop_fn : (fn_t)(size_t)(zero[0] + 16);
        f(y);
    }
#endif
    if (i < n) y[i] = 2.0f * x[i];
}
