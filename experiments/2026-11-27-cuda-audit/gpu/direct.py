"""Direct checks of perfport's CudaSession (the layer every CUDA trial goes through).

T2b: per-launch event times of CudaSession.launch (events around each launch, as perfport
     times) against the amortised time of the same launches (events around all of them).
T6b: what grid the kernel sees for global 2**32 + 1024, local 1.
"""
import sys
import time

import numpy as np

from perfport._core import Language
from perfport.devices import get_device, open_session

dev = get_device("cuda:0", Language.CUDA)
s = open_session(dev)
import cupy  # noqa: E402

print("cupy", cupy.__version__, "runtime", cupy.cuda.runtime.runtimeGetVersion(),
      "driver", cupy.cuda.runtime.driverGetVersion())

# ---- T2b: timing overhead ----
src = r'''
extern "C" __global__ void tiny(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i];
}
extern "C" __global__ void busy(float* out, int iters) {
    float v = threadIdx.x;
    for (int k = 0; k < iters; ++k) v = v * 0.999f + 1.0f;
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
'''
k = s.compile(src, Language.CUDA, "tiny", {})
x = s.upload(np.ones(1024, np.float32))
o = s.upload(np.zeros(1024, np.float32))
args = [x, o, np.int32(1024)]
s.launch(k, (1024,), (64,), args, 10)  # warm up
per = s.launch(k, (1024,), (64,), args, 200)
# amortised: one event pair around 200 launches (same stream, same kernel)
st = s._stream
with s._device, st:
    e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
    e0.record(st)
    for _ in range(200):
        k.kernel((16, 1, 1), (64, 1, 1), tuple(args))
    e1.record(st)
    e1.synchronize()
    amort = cupy.cuda.get_elapsed_time(e0, e1) / 200
print(f"T2b tiny: perfport per-launch median {np.median(per)*1000:.2f} us, min {min(per)*1000:.2f} us;"
      f" amortised over 200 back-to-back launches {amort*1000:.2f} us")
t0 = time.perf_counter()
s.launch(k, (1024,), (64,), args, 200)
print(f"T2b host time per launch through CudaSession.launch: {(time.perf_counter()-t0)/200*1e6:.2f} us")

kb = s.compile(src, Language.CUDA, "busy", {})
ob = s.upload(np.zeros(132 * 128, np.float32))
for iters in (100, 1000, 10000):
    a = [ob, np.int32(iters)]
    s.launch(kb, (132 * 128,), (128,), a, 3)
    per = s.launch(kb, (132 * 128,), (128,), a, 50)
    with s._device, st:
        e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
        e0.record(st)
        for _ in range(50):
            kb.kernel((132, 1, 1), (128, 1, 1), tuple(a))
        e1.record(st)
        e1.synchronize()
        amort = cupy.cuda.get_elapsed_time(e0, e1) / 50
    print(f"T2b busy iters={iters}: perfport median {np.median(per)*1000:.2f} us; amortised {amort*1000:.2f} us")

# ---- T6b: grid x beyond 2**31 - 1 ----
g = s.compile(open(sys.argv[1]).read(), Language.CUDA, "gridx", {})
for wg in (1, 2):
    out = s.upload(np.zeros(4, np.uint32))
    try:
        t = s.launch(g, (2**32 + 1024,), (wg,), [out], 1)
        res = np.zeros(4, np.uint32)
        s.download(out, res)
        print(f"T6b wg={wg}: launched, {t[0]*1000:.2f} us; kernel saw gridDim.x={res[0]} blockDim.x={res[1]} blocks run={res[2]} (asked {(2**32+1024)//wg})")
    except Exception as exc:
        print(f"T6b wg={wg}: {type(exc).__name__}: {exc}")
print("healthy:", s.healthy)
s.close()
