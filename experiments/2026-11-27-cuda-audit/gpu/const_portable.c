CONSTANT_DECL(float, coef, 16)
KERNEL void conv(GLOBAL const float* x, GLOBAL float* out, int n, int m CONSTANT_PARAM(float, coef)) {
    const int i = GID(0);
    if (i >= n) return;
    float s = 0.0f;
    for (int k = 0; k < m; ++k) s += coef[k] * x[i + k];
    out[i] = s;
}
