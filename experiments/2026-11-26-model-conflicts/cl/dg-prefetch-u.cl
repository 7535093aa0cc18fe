#define lid(N) ((int) get_local_id(N))
#define gid(N) ((int) get_group_id(N))

__kernel void __attribute__ ((reqd_work_group_size(16, 16, 1))) dg_prefetch_u(__global float const *__restrict__ diff_mat, __global float const *__restrict__ u, __global float *__restrict__ res, int const nelements)
{
  float acc_j_outer_j_inner[3];
  __local float u_fetch[16 * 16];

  for (int m_0 = 0; m_0 <= 2; ++m_0)
    acc_j_outer_j_inner[m_0] = 0.0f;
  for (int j_outer = 0; j_outer <= 3; ++j_outer)
  {
    barrier(CLK_LOCAL_MEM_FENCE) /* for u_fetch (u_fetch_rule rev-depends on insn_j_outer_j_inner_update) */;
    u_fetch[16 * lid(1) + lid(0)] = u[64 * (16 * gid(0) + lid(1)) + 16 * j_outer + lid(0)];
    barrier(CLK_LOCAL_MEM_FENCE) /* for u_fetch (insn_j_outer_j_inner_update depends on u_fetch_rule) */;
    for (int j_inner = 0; j_inner <= 15; ++j_inner)
      for (int m = 0; m <= 2; ++m)
        acc_j_outer_j_inner[m] = acc_j_outer_j_inner[m] + diff_mat[4096 * m + 64 * (16 * gid(1) + lid(1)) + 16 * j_outer + j_inner] * u_fetch[16 * lid(0) + j_inner];
  }
  for (int m_1 = 0; m_1 <= 2; ++m_1)
    res[64 * nelements * m_1 + 64 * (16 * gid(0) + lid(0)) + 16 * gid(1) + lid(1)] = acc_j_outer_j_inner[m_1];
}