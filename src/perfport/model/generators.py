"""UIPiCK's microbenchmark generators (section 7.1.2) as loopy kernels: arithmetic throughput,
global loads and (store-only) global stores by stride pattern, local memory, barriers, an
empty kernel (launch and work-group overhead), the overlap kernel of section 7.4, 2-D tile
loads with a halo (``generators_tile.py``), and the work-removed application kernels
(``workremoval.py``).

Problem sizes aim at the paper's 1-1000 ms: work-item counts are a base (tuned on PoCL on 2
cores) times ``scale``, which ``device_scale`` takes from the device's compute units (times 16
on a GPU, whose cores each run far more work-items at once). Any size can be given instead
with a variant tag (``nelements:65536``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perfport.model.collection import KERNEL_PREFIX, Generator, VariantArg
from perfport.model.gather import loopy

NVARS = 32  # private variables per work-item in the arithmetic kernels, as in SHOC MaxFlops
_UPDATE = {
    "madd": "v{i} = v{i} * v{j} + v{k}",
    "mul": "v{i} = v{i} * v{j}",
    "add": "v{i} = v{i} + v{j}",
    "div": "v{i} = v{i} / v{j}",
}


def device_scale(compute_units: int, gpu: bool) -> int:
    """How much larger than on PoCL's 2 cores the sizes should be on a device."""
    return max(1, (compute_units * (16 if gpu else 1)) // 2)


def _args(lp: Any, dtype: str, *names: str, shape: str = "nel") -> list[Any]:
    return [lp.GlobalArg(n, np.dtype(dtype), shape=shape) for n in names]


def _finish(knl: Any, lsize: int, assume: str) -> Any:
    lp = loopy()
    knl = lp.assume(knl, assume)
    return lp.split_iname(knl, "g", lsize, outer_tag="g.0", inner_tag="l.0")


def make_flops(op: str, dtype: str, lsize_0: int, unroll: int) -> Any:
    """Each work-item updates 32 private variables per iteration with ``op`` (m iterations,
    unrolled ``unroll`` times), ordered so that no update reads one of the four before it."""
    lp = loopy()
    lines = [f"<{dtype}> base = a[g] {{id=load, inames=g}}"]
    lines += [
        f"<{dtype}> v{i} = base + {i + 1} {{id=init{i}, dep=load, inames=g}}" for i in range(NVARS)
    ]
    for i in range(NVARS):
        update = _UPDATE[op].format(i=i, j=(i + 16) % NVARS, k=(i + 24) % NVARS)
        dep = "init*" if i == 0 else f"u{i - 1}"
        lines.append(f"{update} {{id=u{i}, dep={dep}, inames=g:k}}")
    total = " + ".join(f"v{i}" for i in range(NVARS))
    lines.append(f"out[g] = {total} {{id=store, dep=u*, inames=g}}")
    knl = lp.make_kernel(
        "{[g,k]: 0<=g<nel and 0<=k<m}",
        "\n".join(lines),
        [*_args(lp, dtype, "a", "out"), ...],
        name=f"{KERNEL_PREFIX}flops_{op}",
        lang_version=(2018, 2),
    )
    knl = _finish(
        knl,
        lsize_0,
        f"nel mod {lsize_0} = 0 and nel >= {lsize_0} and m mod {unroll} = 0 and m >= 1",
    )
    return lp.split_iname(knl, "k", unroll, inner_tag="unr")


def make_gmem(dtype: str, lsize_0: int, lid_stride_0: int, n_arrays: int) -> Any:
    """``out[g] = in0[p] + in1[p] + ...`` with p = lid_stride_0*lid(0) + gid_stride*gid(0),
    the group stride leaving no gap and no overlap (AFR 1)."""
    lp = loopy()
    gstride = lid_stride_0 * lsize_0
    index = f"{lid_stride_0}*(g % {lsize_0}) + {gstride}*(g // {lsize_0})"
    loads = " + ".join(f"in{i}[{index}]" for i in range(n_arrays))
    shape = f"{lid_stride_0}*nel"
    knl = lp.make_kernel(
        "{[g]: 0<=g<nel}",
        f"out[g] = {loads}",
        [
            *_args(lp, dtype, *(f"in{i}" for i in range(n_arrays)), shape=shape),
            *_args(lp, dtype, "out"),
            ...,
        ],
        name=f"{KERNEL_PREFIX}gmem",
        lang_version=(2018, 2),
    )
    return _finish(knl, lsize_0, f"nel mod {lsize_0} = 0 and nel >= {lsize_0}")


def make_gstore(dtype: str, lsize_0: int, lid_stride_0: int, n_arrays: int) -> Any:
    """``out0[p] = g``, ``out1[p] = g + 1``, ... with p as in ``make_gmem``: stores of a stride
    pattern and no global load (the value comes from the work-item id), so the store cost is
    measured apart from the load and per-group costs that every other kernel mixes it with."""
    lp = loopy()
    gstride = lid_stride_0 * lsize_0
    index = f"{lid_stride_0}*(g % {lsize_0}) + {gstride}*(g // {lsize_0})"
    body = "\n".join(f"out{i}[{index}] = g + {i} {{id=store{i}}}" for i in range(n_arrays))
    knl = lp.make_kernel(
        "{[g]: 0<=g<nel}",
        body,
        [
            *_args(lp, dtype, *(f"out{i}" for i in range(n_arrays)), shape=f"{lid_stride_0}*nel"),
            ...,
        ],
        name=f"{KERNEL_PREFIX}gstore",
        lang_version=(2018, 2),
    )
    return _finish(knl, lsize_0, f"nel mod {lsize_0} = 0 and nel >= {lsize_0}")


def _local_mover(lp: Any, dtype: str, lsize_0: int, slots: int, body: str, name: str) -> Any:
    """A kernel whose work-items each own one column of a local array of ``slots`` rows and
    move a value between rows (lid(0) stride 1: no bank conflicts, no races, no barriers)."""
    local = lp.TemporaryVariable(
        "loc", np.dtype(dtype), shape=(slots, lsize_0), address_space=lp.AddressSpace.LOCAL
    )
    return lp.make_kernel(
        "{[g,k]: 0<=g<nel and 0<=k<m}",
        body,
        [*_args(lp, dtype, "a", "out"), local, ...],
        name=name,
        lang_version=(2018, 2),
    )


def make_lmem(dtype: str, lsize_0: int) -> Any:
    """m local-memory load-store moves per work-item between one global load and store."""
    lp = loopy()
    col = f"g % {lsize_0}"
    body = f"""
    loc[0, {col}] = a[g] {{id=init}}
    loc[(k + 1) % 8, {col}] = loc[k % 8, {col}] {{id=move, dep=init}}
    out[g] = loc[m % 8, {col}] {{id=store, dep=move}}
    """
    knl = _local_mover(lp, dtype, lsize_0, 8, body, f"{KERNEL_PREFIX}lmem")
    return _finish(knl, lsize_0, f"nel mod {lsize_0} = 0 and nel >= {lsize_0} and m >= 1")


LMEM_WINDOW = 8  # distinct local words each work-item cycles through (no hoisting, no reuse)


def make_lmem_stride(dtype: str, lsize_0: int, lid_stride_0: int, lsize_1: int = 1) -> Any:
    """m local loads per work-item at lid(0) stride ``lid_stride_0`` (0: every work-item of a
    sub-group reads one word, a broadcast; 16 or 32: bank conflicts), summed, after the
    work-group fills the local array (stores, lid(0) stride 1) and one barrier: the local
    read patterns of the prefetching application kernels, which ``lmem_pattern`` (stride 1
    load-store moves) does not exercise. ``lsize_1`` > 1 makes the work-group 2-D with lid(1)
    not in the read's index (a broadcast across lid(1)): the application kernels' 16 x 16
    layout, in which a 32-lane sub-group spans 2 lid(1) rows and so conflicts less."""
    lp = loopy()
    group = lsize_0 * lsize_1
    words = lid_stride_0 * lsize_0 + LMEM_WINDOW
    fills = -(-words // group)  # stores per work-item to fill the array
    local = lp.TemporaryVariable(
        "loc", np.dtype(dtype), shape=(fills * group,), address_space=lp.AddressSpace.LOCAL
    )
    body = f"""
    <{dtype}> x = a[g] {{id=load, inames=g}}
    loc[{group}*f + (g % {group})] = x + f {{id=fill, dep=load}}
    ... lbarrier {{id=sync, dep=fill}}
    <{dtype}> acc = 0 {{id=zero, inames=g}}
    acc = acc + loc[{lid_stride_0}*(g % {lsize_0}) + k % {LMEM_WINDOW}] {{id=sum, dep=sync:zero}}
    out[g] = acc {{id=store, dep=sum}}
    """
    knl = lp.make_kernel(
        f"{{[g,f,k]: 0<=g<nel and 0<=f<{fills} and 0<=k<m}}",
        body,
        [*_args(lp, dtype, "a", "out"), local, ...],
        name=f"{KERNEL_PREFIX}lmem_stride",
        lang_version=(2018, 2),
    )
    assume = f"nel mod {group} = 0 and nel >= {group} and m >= 1"
    if lsize_1 == 1:
        return _finish(knl, lsize_0, assume)
    knl = lp.split_iname(lp.assume(knl, assume), "g", group, outer_tag="g.0")
    return lp.split_iname(knl, "g_inner", lsize_0, outer_tag="l.1", inner_tag="l.0")


HOIST_INDEX = ("invariant", "dependent", "manual")


def make_lmem_hoist(dtype: str, lsize_0: int, index: str, trips: int) -> Any:
    """Tests the issued-load rule (``hoist.py``) apart from any application kernel: the
    work-group fills a local array of ``LMEM_WINDOW`` rows (lid(0) stride 1) behind one
    barrier, then each work-item adds a local word to one accumulator ``trips`` times per
    iteration of a loop over m. ``index``: ``invariant`` reads ``loc[k % 8, lid]`` in the
    inner loop (its index does not change there: the rule counts m loads, loopy m * trips);
    ``dependent`` reads ``loc[(k + j) % 8, lid]`` (m * trips loads both ways: the control);
    ``manual`` loads ``loc[k % 8, lid]`` once per k into a private before the inner loop (the
    hoisting written out: m loads both ways). Every variant does the same m * trips adds, and
    float adds into one accumulator cannot be merged, so only the loads differ."""
    lp = loopy()
    local = lp.TemporaryVariable(
        "loc", np.dtype(dtype), shape=(LMEM_WINDOW, lsize_0), address_space=lp.AddressSpace.LOCAL
    )
    col = f"g % {lsize_0}"
    read = {
        "invariant": f"loc[k % {LMEM_WINDOW}, {col}]",
        "dependent": f"loc[(k + j) % {LMEM_WINDOW}, {col}]",
        "manual": "x",
    }[index]
    fetch = f"<{dtype}> x = loc[k % {LMEM_WINDOW}, {col}] {{id=fetch, dep=sync, inames=g:k}}"
    body = f"""
    <{dtype}> y = a[g] {{id=load, inames=g}}
    loc[f, {col}] = y + f {{id=fill, dep=load}}
    ... lbarrier {{id=sync, dep=fill}}
    <{dtype}> acc = 0 {{id=zero, inames=g}}
    {fetch if index == "manual" else ""}
    acc = acc + {read} {{id=sum, dep=sync:zero{":fetch" if index == "manual" else ""}, inames=g:k:j}}
    out[g] = acc {{id=store, dep=sum}}
    """
    knl = lp.make_kernel(
        f"{{[g,f,k,j]: 0<=g<nel and 0<=f<{LMEM_WINDOW} and 0<=k<m and 0<=j<{trips}}}",
        body,
        [*_args(lp, dtype, "a", "out"), local, ...],
        name=f"{KERNEL_PREFIX}lmem_hoist",
        lang_version=(2018, 2),
    )
    knl = lp.prioritize_loops(knl, "k,j")  # j inside k: the invariant load is j's
    return _finish(knl, lsize_0, f"nel mod {lsize_0} = 0 and nel >= {lsize_0} and m >= 1")


def make_overlap(dtype: str, lsize_0: int) -> Any:
    """Section 7.4: one global load, m local load-store sequences, one global store, so the
    ratio of local to global accesses (m) decides which dominates."""
    lp = loopy()
    col = f"g % {lsize_0}"
    body = f"""
    loc[0, {col}] = a[g] {{id=init}}
    loc[(k + 1) % 2, {col}] = loc[k % 2, {col}] {{id=move, dep=init}}
    out[g] = loc[m % 2, {col}] {{id=store, dep=move}}
    """
    knl = _local_mover(lp, dtype, lsize_0, 2, body, f"{KERNEL_PREFIX}overlap")
    return _finish(knl, lsize_0, f"nel mod {lsize_0} = 0 and nel >= {lsize_0} and m >= 1")


def make_barrier(lsize_0: int) -> Any:
    """m local barriers per work-item, then one copy so the kernel has an effect."""
    lp = loopy()
    knl = lp.make_kernel(
        "{[g,k]: 0<=g<nel and 0<=k<m}",
        "... lbarrier {id=b, inames=g:k}\nout[g] = a[g] {id=store, dep=b}",
        [*_args(lp, "float32", "a", "out"), ...],
        name=f"{KERNEL_PREFIX}barrier",
        lang_version=(2018, 2),
    )
    return _finish(knl, lsize_0, f"nel mod {lsize_0} = 0 and nel >= {lsize_0} and m >= 1")


def make_empty(lsize_0: int) -> Any:
    """``ngroups`` work-groups that do nothing: launch and work-group overhead."""
    lp = loopy()
    knl = lp.make_kernel(
        f"{{[g]: 0<=g<ngroups*{lsize_0}}}",
        "... nop {id=n, inames=g}",
        [lp.ValueArg("ngroups", np.int32)],
        name=f"{KERNEL_PREFIX}empty",
        lang_version=(2018, 2),
    )
    return _finish(knl, lsize_0, "ngroups >= 1")


def _sizes(base: int, scale: int, factors: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(base * scale * f for f in factors)


def _memory_generators(
    dtypes: VariantArg, lsize: VariantArg, nel: VariantArg, scale: int
) -> list[Generator]:
    """Global loads and stores by stride pattern, local-memory moves, local loads by stride."""
    sizes = frozenset({"nel", "m"})
    return [
        Generator(
            "gmem_pattern",
            frozenset({"gmem", "gmem_pattern"}),
            (
                dtypes,
                lsize,
                VariantArg("lid_stride_0", (1, 2, 4)),
                VariantArg("n_arrays", (1, 2, 4)),
                VariantArg("nel", _sizes(1 << 20, scale, (1, 2, 4)), open=True),
            ),
            make_gmem,
            frozenset({"nel"}),
            "global loads of a stride pattern (AFR 1), summed into one store",
        ),
        Generator(
            "gstore_pattern",
            frozenset({"gstore", "gstore_pattern"}),
            (
                dtypes,
                lsize,
                VariantArg("lid_stride_0", (1, 2, 4)),
                VariantArg("n_arrays", (1, 2, 4)),
                VariantArg("nel", _sizes(1 << 20, scale, (1, 2, 4)), open=True),
            ),
            make_gstore,
            frozenset({"nel"}),
            "global stores of a stride pattern, values from the work-item id, no loads",
        ),
        Generator(
            "lmem_pattern",
            frozenset({"lmem", "lmem_pattern"}),
            (dtypes, lsize, nel, VariantArg("m", (64, 128, 256), open=True)),
            make_lmem,
            sizes,
            "local memory load-store moves, lid(0) stride 1",
        ),
        Generator(
            "lmem_stride_pattern",
            frozenset({"lmem_stride", "lmem_stride_pattern"}),
            (
                dtypes,
                # open: lsize_0:16 lsize_1:16 is the application kernels' layout
                VariantArg("lsize_0", lsize.values, open=True),
                VariantArg("lid_stride_0", (0, 1, 2, 16, 32)),
                nel,
                VariantArg("m", (64, 128, 256), open=True),
                # 1-D work-groups unless asked (lsize_1:16: the applications' 16 x 16)
                VariantArg("lsize_1", (1,), open=True),
            ),
            make_lmem_stride,
            sizes,
            "local loads at a lid(0) stride (broadcast, conflict-free, bank conflicts)",
        ),
        Generator(
            "lmem_hoist_pattern",
            frozenset({"lmem_hoist", "lmem_hoist_pattern"}),
            (
                dtypes,
                lsize,
                VariantArg("index", HOIST_INDEX),
                VariantArg("trips", (8,), open=True),
                nel,
                VariantArg("m", (16, 32, 64), open=True),
            ),
            make_lmem_hoist,
            sizes,
            "a local load invariant in an inner loop of trips (hoisted by the compiler?), "
            "against one that depends on it and one hoisted by hand",
        ),
    ]


def all_generators(scale: int = 1) -> tuple[Generator, ...]:
    """Every built-in generator, with work-item counts ``scale`` times PoCL's."""
    dtypes = VariantArg("dtype", ("float32", "float64"))
    lsize = VariantArg("lsize_0", (256,))
    nel = VariantArg("nel", _sizes(4096, scale, (1, 2, 4)), open=True)
    sizes = frozenset({"nel", "m"})
    out = [
        Generator(
            f"flops_{op}_pattern",
            frozenset({"flops", f"flops_{op}_pattern"}),
            (
                dtypes,
                lsize,
                VariantArg("unroll", (8,)),
                nel,
                VariantArg("m", (64, 128, 256), open=True),
            ),
            lambda op=op, **kw: make_flops(op, **kw),
            sizes,
            f"{op} throughput: 32 private variables, dependent chains four apart",
        )
        for op in _UPDATE
    ]
    out += [
        *_memory_generators(dtypes, lsize, nel, scale),
        Generator(
            "barrier_pattern",
            frozenset({"sync", "barrier_pattern"}),
            (lsize, nel, VariantArg("m", (1024, 2048, 4096), open=True)),
            make_barrier,
            sizes,
            "local barriers in a loop",
        ),
        Generator(
            "empty_kernel",
            frozenset({"sync", "empty_kernel"}),
            (lsize, VariantArg("ngroups", (16, 256, *_sizes(1024, scale, (1, 4, 16))), open=True)),
            make_empty,
            frozenset({"ngroups"}),
            "work-groups doing nothing: launch and per-group overhead",
        ),
        Generator(
            "overlap_pattern",
            frozenset({"overlap", "overlap_pattern"}),
            (
                VariantArg("dtype", ("float32",)),
                lsize,
                VariantArg("nel", _sizes(1 << 18, scale, (1,)), open=True),
                VariantArg("m", (1, 2, 4, 8, 16, 32, 64), open=True),
            ),
            make_overlap,
            sizes,
            "one global load, m local load-store pairs, one global store (section 7.4)",
        ),
    ]
    from perfport.model.generators_tile import tile_generators
    from perfport.model.workremoval import work_removal_generators  # it builds on the apps

    return (*out, *tile_generators(scale), *work_removal_generators())
