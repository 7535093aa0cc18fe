#define lid(N) ((int) get_local_id(N))
#define gid(N) ((int) get_group_id(N))

__kernel void __attribute__ ((reqd_work_group_size(18, 18, 1))) finite_diff_18(__global float const *__restrict__ u, __global float *__restrict__ res, int const n)
{
  __local float u_fetch[18 * 18];

  u_fetch[18 * lid(1) + lid(0)] = u[(n + 2) * (16 * gid(1) + lid(1)) + 16 * gid(0) + lid(0)];
  barrier(CLK_LOCAL_MEM_FENCE) /* for u_fetch (insn depends on u_fetch_rule) */;
  if (15 + -1 * lid(0) >= 0 && 15 + -1 * lid(1) >= 0)
    res[n * (16 * gid(1) + lid(1)) + 16 * gid(0) + lid(0)] = u_fetch[18 * lid(1) + 1 + lid(0)] + u_fetch[18 * (1 + lid(1)) + lid(0)] + -1.0f * 4.0f * u_fetch[18 * (1 + lid(1)) + 1 + lid(0)] + u_fetch[18 * (1 + lid(1)) + 2 + lid(0)] + u_fetch[18 * (2 + lid(1)) + 1 + lid(0)];
}