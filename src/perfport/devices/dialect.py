"""perfport's portable kernel dialect: one source, compiled as OpenCL C or as CUDA C.

A PORTABLE kernel uses these macros instead of API-specific keywords; the backend prepends
the matching prelude before compiling.

  KERNEL void f(...)          kernel entry point
  DEVICE_FN T g(...)          helper function
  GLOBAL T* p                 global-memory pointer parameter
  LOCAL T t[N];               statically sized local (shared) array inside a kernel
  LOCAL_PTR T* p              pointer to local memory in a helper's parameter list
  LOCAL_PARAM(T, name)        a dynamically sized local buffer; write it right after the
                              previous parameter, with no comma (it supplies its own)
  LOCAL_DECL(T, name)         first statement of a kernel that has LOCAL_PARAM, one per
                              buffer (CUDA: each its own part of dynamic shared memory, at the
                              byte offset the launch passes for its LOCAL_PARAM)
  BARRIER()                   work-group barrier with a local-memory fence
  GID(d) LID(d) GROUP(d) LSIZE(d) NGROUPS(d)   ids and sizes as int, d in 0..2
  RESTRICT                    restrict qualifier
  CONSTANT_DECL(T, name, n)   at file scope: a constant-memory array of n elements (CUDA);
                              n must be a compile-time constant
  CONSTANT_PARAM(T, name)     its parameter (OpenCL), written like LOCAL_PARAM; pass the
                              argument as ArrayArg(..., constant=True)
  LDG(p)                      *p through the read-only data cache (CUDA __ldg)
"""

from __future__ import annotations

OPENCL_PRELUDE = r"""
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define KERNEL __kernel
#define DEVICE_FN static inline
#define GLOBAL __global
#define LOCAL __local
#define LOCAL_PTR __local
#define LOCAL_PARAM(T, name) , __local T* name
#define LOCAL_DECL(T, name)
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define GID(d) ((int)get_global_id(d))
#define LID(d) ((int)get_local_id(d))
#define GROUP(d) ((int)get_group_id(d))
#define LSIZE(d) ((int)get_local_size(d))
#define NGROUPS(d) ((int)get_num_groups(d))
#define RESTRICT restrict
#define CONSTANT_DECL(T, name, n)
#define CONSTANT_PARAM(T, name) , __constant T* name
#define LDG(p) (*(p))
#line 1
"""

CUDA_PRELUDE = r"""
#define KERNEL extern "C" __global__
#define DEVICE_FN __device__ static inline
#define GLOBAL
#define LOCAL __shared__
#define LOCAL_PTR
#define LOCAL_PARAM(T, name) , unsigned int name##_perfport_at
#define LOCAL_DECL(T, name) extern __shared__ __align__(16) unsigned char perfport_smem_[]; T* name = (T*)(perfport_smem_ + name##_perfport_at);
#define BARRIER() __syncthreads()
__device__ static inline int perfport_dim_(unsigned x, unsigned y, unsigned z, int d) {
    return d == 0 ? (int)x : (d == 1 ? (int)y : (int)z);
}
#define LID(d) perfport_dim_(threadIdx.x, threadIdx.y, threadIdx.z, d)
#define GROUP(d) perfport_dim_(blockIdx.x, blockIdx.y, blockIdx.z, d)
#define LSIZE(d) perfport_dim_(blockDim.x, blockDim.y, blockDim.z, d)
#define NGROUPS(d) perfport_dim_(gridDim.x, gridDim.y, gridDim.z, d)
#define GID(d) (GROUP(d) * LSIZE(d) + LID(d))
#define RESTRICT __restrict__
#define CONSTANT_DECL(T, name, n) __constant__ T name[n];
#define CONSTANT_PARAM(T, name)
#define LDG(p) __ldg(p)
#line 1
"""
