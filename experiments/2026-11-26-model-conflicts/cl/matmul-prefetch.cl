#define lid(N) ((int) get_local_id(N))
#define gid(N) ((int) get_group_id(N))

__kernel void __attribute__ ((reqd_work_group_size(16, 16, 1))) matmul_prefetch(__global float const *__restrict__ a, __global float const *__restrict__ b, __global float *__restrict__ c, int const n)
{
  __local float a_fetch[16 * 16];
  float acc_k_outer_k_inner;
  __local float b_fetch[16 * 16];

  acc_k_outer_k_inner = 0.0f;
  for (int k_outer = 0; k_outer <= (-16 + n) / 16; ++k_outer)
  {
    barrier(CLK_LOCAL_MEM_FENCE) /* for a_fetch (a_fetch_rule rev-depends on insn_k_outer_k_inner_update) */;
    a_fetch[16 * lid(1) + lid(0)] = a[n * (16 * gid(1) + lid(1)) + 16 * k_outer + lid(0)];
    b_fetch[16 * lid(1) + lid(0)] = b[n * (16 * k_outer + lid(1)) + 16 * gid(0) + lid(0)];
    barrier(CLK_LOCAL_MEM_FENCE) /* for a_fetch (insn_k_outer_k_inner_update depends on a_fetch_rule) */;
    for (int k_inner = 0; k_inner <= 15; ++k_inner)
      acc_k_outer_k_inner = acc_k_outer_k_inner + a_fetch[16 * lid(1) + k_inner] * b_fetch[16 * k_inner + lid(0)];
  }
  c[n * (16 * gid(1) + lid(1)) + 16 * gid(0) + lid(0)] = acc_k_outer_k_inner;
}