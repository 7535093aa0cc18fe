#define lid(N) ((int) get_local_id(N))
#define gid(N) ((int) get_group_id(N))

__kernel void __attribute__ ((reqd_work_group_size(16, 16, 1))) dg_prefetch_dm(__global float const *__restrict__ diff_mat, __global float const *__restrict__ u, __global float *__restrict__ res, int const nelements)
{
  float acc_j_outer_j_inner;
  __local float diff_mat_fetch[16 * 16];

  for (int m = 0; m <= 2; ++m)
  {
    acc_j_outer_j_inner = 0.0f;
    for (int j_outer = 0; j_outer <= 3; ++j_outer)
    {
      barrier(CLK_LOCAL_MEM_FENCE) /* for diff_mat_fetch (diff_mat_fetch_rule rev-depends on insn_j_outer_j_inner_update) */;
      diff_mat_fetch[16 * lid(1) + lid(0)] = diff_mat[4096 * m + 64 * (16 * gid(1) + lid(1)) + 16 * j_outer + lid(0)];
      barrier(CLK_LOCAL_MEM_FENCE) /* for diff_mat_fetch (insn_j_outer_j_inner_update depends on diff_mat_fetch_rule) */;
      for (int j_inner = 0; j_inner <= 15; ++j_inner)
        acc_j_outer_j_inner = acc_j_outer_j_inner + diff_mat_fetch[16 * lid(1) + j_inner] * u[64 * (16 * gid(0) + lid(0)) + 16 * j_outer + j_inner];
    }
    res[64 * nelements * m + 64 * (16 * gid(0) + lid(0)) + 16 * gid(1) + lid(1)] = acc_j_outer_j_inner;
  }
}