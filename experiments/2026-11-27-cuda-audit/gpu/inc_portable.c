#include "helper.h"
KERNEL void inc(GLOBAL const float* x, GLOBAL float* y, int n) {
    const int i = GID(0);
    if (i < n) y[i] = TWICE(x[i]);
}
