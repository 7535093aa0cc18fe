"""The host logic of time-stepping: which extent elements move between parts for a halo
exchange and for a re-split, where they sit in a part's buffer, and which kernels can step."""

from __future__ import annotations

import dataclasses

import pytest

from perfport._core import SpecError, SplitArray, SplitDim
from perfport.kernels import builtin
from perfport.split.halo import Slab, Transfer, check_feeds, halo_ranges, transfers


def test_a_halo_comes_from_the_neighbours_that_own_it():
    owned = [(0, 40), (40, 97)]
    wanted = [halo_ranges((0, 40), (0, 41)), halo_ranges((40, 97), (38, 97))]
    assert wanted == [((40, 41),), ((38, 40),)]
    assert transfers(owned, wanted) == (Transfer(1, 0, 40, 41), Transfer(0, 1, 38, 40))


def test_a_halo_wider_than_a_part_spans_several_owners():
    owned = [(0, 10), (10, 11), (11, 30)]
    assert transfers(owned, [[(9, 13)], [], []]) == (
        Transfer(0, 0, 9, 10),
        Transfer(1, 0, 10, 11),
        Transfer(2, 0, 11, 13),
    )


def test_a_resplit_keeps_what_a_device_holds_and_moves_the_rest():
    old = [(0, 40), (40, 97)]
    new_held = [[(0, 61)], [(59, 97)]]  # new parts (0, 60) and (60, 97), halo 1 each side
    assert transfers(old, new_held) == (
        Transfer(0, 0, 0, 40),
        Transfer(1, 0, 40, 61),
        Transfer(1, 1, 59, 97),
    )
    assert transfers([(0, 0), (0, 97)], [[(0, 50)], [(49, 97)]])[0] == Transfer(1, 0, 0, 50)


def test_elements_no_part_owns_are_an_error():
    with pytest.raises(ValueError, match="not all owned"):
        transfers([(0, 10), (12, 20)], [[(8, 14)], []])


def test_a_slab_spans_whole_rows_from_the_held_start():
    assert Slab(first=38, row_bytes=520).span(38, 40) == (0, 1040)
    assert Slab(first=38, row_bytes=520).span(96, 97) == (58 * 520, 520)


def _env(spec, **problem):
    return spec.env({}, spec.problem.merged(problem))


def test_stencils_step_by_rows():
    for name in ("stencil", "stencil_wide", "gaussian"):
        spec = builtin(name)
        check_feeds(spec, spec.split[1], _env(spec))


@pytest.mark.parametrize(
    ("kernel", "dim", "problem", "says"),
    [
        ("convolution", 0, {}, "declares no feeds"),
        ("stencil", 0, {}, "outermost axis"),  # columns are not contiguous rows
        ("stencil", 1, {"out_dtype": "double"}, "same shape and type"),
    ],
)
def test_kernels_that_cannot_step_are_refused(kernel, dim, problem, says):
    spec = builtin(kernel)
    split = next(s for s in spec.split if s.dimension == dim)
    with pytest.raises(SpecError, match=says):
        check_feeds(spec, split, _env(spec, **problem))


def test_feeds_must_name_two_cut_arrays():
    spec = builtin("stencil")
    bad = SplitDim(1, "height", (SplitArray("input", "0"),), halo=("1", "1"),
                   feeds={"output": "input"})  # fmt: skip
    with pytest.raises(SpecError, match="feeds 'output' into 'input'"):
        dataclasses.replace(spec, split=(bad,))
