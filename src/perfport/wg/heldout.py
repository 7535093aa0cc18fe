"""Scoring work-group choices on held-out rounds, without the winner's curse.

The usual score of a choice is t_fastest / t_chosen on one table of medians, where t_fastest is
that table's minimum over every size. On a CPU many sizes are within noise of each other, and
the minimum of many noisy times is biased low: every choice, the table's own oracle from
another measurement included, is scored against a time no size really achieves.

The held-out score splits a scenario's interleaved rounds into two groups, A and B. The fastest
size is chosen on A's medians; both it and the choice are timed on B's, and the ratio is
t_B(fastest on A) / t_B(choice); then A and B swap, and the two ratios' geometric mean is the
scenario's score. Neither time is a minimum of the times it is read from, so noise alone moves
the score up as often as down: a choice as fast as the fastest size scores about 100%, and it
may score more. A choice must not have been made on the scenario's own rounds (a predictor
trained with the scenario left out); the table's oracle, which saw every round, is reported
beside as what a choice that saw B scores (biased up).

Samples come as the interleaved-round collections store them (``data/wg/rounds/*.samples.npz``:
``samples`` (scenarios, sizes, rounds, launches) with NaN where a size did not run, ``sizes``,
and the ``device``, ``kernel`` and ``dataset`` labels of each scenario).
"""

from __future__ import annotations

import warnings
import zipfile
import zlib
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import PerfportError
from perfport._core.stats import bootstrap_geomean_ci, geomean
from perfport.wg.dataset import WgDataset
from perfport.wg.evaluate import EvalResult
from perfport.wg.npz_arrays import Expected, Held, check_rows, checked_array


class Split(Enum):
    """How a scenario's rounds become the two groups."""

    HALVES = "halves"  # the first half of the rounds against the second (drift counts as noise)
    ALTERNATE = "alternate"  # even rounds against odd ones


@dataclass(frozen=True)
class RoundSamples:
    """An interleaved-round collection: every launch's time, per scenario and size."""

    name: str
    samples: np.ndarray  # (scenarios, sizes, rounds, launches), NaN where a size did not run
    sizes: np.ndarray  # (sizes, 2): (wc, wr)
    device: np.ndarray
    kernel: np.ndarray
    dataset: np.ndarray


@dataclass(frozen=True)
class HeldOutScore:
    """One choice per scenario, scored both ways over the same scenarios."""

    choice: str  # a method, "oracle" or "w(32x4)"
    scenarios: int  # scored (the choice ran in both groups)
    heldout: float  # geometric mean of the held-out scores
    heldout_ci95: tuple[float, float]  # bootstrap over the scenarios
    same_table: float  # geometric mean of t_min / t_chosen on every round's medians
    same_table_ci95: tuple[float, float]

    def to_json(self) -> dict[str, Any]:
        return {
            "choice": self.choice,
            "scenarios": self.scenarios,
            "heldout": self.heldout,
            "heldout_ci95": list(self.heldout_ci95),
            "same_table": self.same_table,
            "same_table_ci95": list(self.same_table_ci95),
        }


# No perfport command writes samples files (a store keeps medians): the script that does, and
# the files it wrote, are in the source repository, not in the installed package.
_WRITER = (
    "such files are written by experiments/2026-11-22-wg-repeatability/wg_rounds.py --save, "
    "a script in perfport's source repository (data/wg/rounds/ there holds those measured)"
)
# Each array of a samples file: what it holds and its dimensions.
_ARRAYS = {"samples": Expected(Held.NUMBER, 4), "sizes": Expected(Held.WHOLE, 2),
           "device": Expected(Held.NAME, 1), "kernel": Expected(Held.NAME, 1),
           "dataset": Expected(Held.NAME, 1)}  # fmt: skip


def load_samples(path: str | Path) -> RoundSamples:
    """A ``*.samples.npz`` file; a clear error for a file that is not one."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in _ARRAYS}
    except FileNotFoundError:
        raise PerfportError(
            f"{path}: no such file; give a *.samples.npz of rounds ({_WRITER})"
        ) from None
    except (KeyError, ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        # A file cut short fails inside zipfile or zlib, not numpy; numpy's own message for
        # some suggests unpickling the file, not ours to suggest.
        why = (f"it lacks {exc}" if isinstance(exc, KeyError)
               else exc.strerror if isinstance(exc, OSError) and exc.strerror
               else "unreadable or cut short")  # fmt: skip
        raise PerfportError(f"{path}: not a samples file of rounds ({why}); {_WRITER}") from None
    arrays = {n: checked_array(path, n, a, _ARRAYS[n], _WRITER) for n, a in arrays.items()}
    samples = arrays["samples"]
    if samples.shape[2] < 2 or samples.shape[1] != len(arrays["sizes"]):
        raise PerfportError(
            f"{path}: samples of shape {samples.shape} are not (scenarios, sizes, rounds >= 2, "
            "launches); held-out scoring needs at least two rounds"
        )
    check_rows(path, arrays, ("device", "kernel", "dataset"), len(samples), "samples", _WRITER)
    name = path.name.removesuffix(".npz").removesuffix(".samples")
    return RoundSamples(name, samples, arrays["sizes"], arrays["device"], arrays["kernel"],
                        arrays["dataset"])  # fmt: skip


def group_medians(samples: np.ndarray, split: Split) -> tuple[np.ndarray, np.ndarray]:
    """(S, W) medians of group A and of group B, each size's launches pooled."""
    rounds = samples.shape[2]
    if split is Split.HALVES:
        a, b = samples[:, :, : rounds // 2], samples[:, :, rounds // 2 :]
    else:
        a, b = samples[:, :, 0::2], samples[:, :, 1::2]
    return _medians(a), _medians(b)


def _medians(samples: np.ndarray) -> np.ndarray:
    """(S, W) each size's median over its samples; NaN where it never ran."""
    s, w, rounds, launches = samples.shape
    flat = samples.reshape(s, w, rounds * launches)  # explicit: -1 fails on no scenarios
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanmedian of an all-NaN slice
        return np.nanmedian(flat, axis=2)


def _timed_against(pick: np.ndarray, timed: np.ndarray, choice: int) -> float:
    """``timed`` at ``pick``'s fastest size over ``timed`` at ``choice``."""
    ran = np.isfinite(pick) & np.isfinite(timed) & (pick > 0) & (timed > 0)
    if not ran[choice]:
        return float("nan")
    fastest = int(np.argmin(np.where(ran, pick, np.inf)))
    return float(timed[fastest] / timed[choice])


def heldout_ratios(
    samples: np.ndarray, choices: np.ndarray, split: Split = Split.HALVES
) -> np.ndarray:
    """Each scenario's held-out score of its chosen size (a column of ``samples``): the fastest
    size of one group timed against the choice in the other, both ways, geometric mean; NaN
    where the choice did not run in both groups."""
    a, b = group_medians(samples, split)
    out = np.full(len(choices), np.nan)
    for s, c in enumerate(choices):
        if c < 0:
            continue
        one, two = _timed_against(a[s], b[s], int(c)), _timed_against(b[s], a[s], int(c))
        out[s] = np.sqrt(one * two)
    return out


def same_table_ratios(samples: np.ndarray, choices: np.ndarray) -> np.ndarray:
    """Each scenario's usual score: the minimum over sizes of every round's medians over the
    choice's median (NaN where the choice did not run)."""
    med = _medians(samples)
    med = np.where(np.isfinite(med) & (med > 0), med, np.nan)
    out = np.full(len(choices), np.nan)
    for s, c in enumerate(choices):
        if c >= 0 and np.isfinite(med[s, c]):
            out[s] = float(np.nanmin(med[s]) / med[s, c])
    return out


def score(
    samples: np.ndarray,
    choices: np.ndarray,
    choice: str,
    split: Split = Split.HALVES,
    seed: int = 0,
) -> HeldOutScore:
    """Both scores of one choice per scenario, over the scenarios where it ran in both groups."""
    held = heldout_ratios(samples, choices, split)
    same = same_table_ratios(samples, choices)
    keep = np.isfinite(held) & np.isfinite(same)
    held, same = held[keep], same[keep]
    return HeldOutScore(choice, int(keep.sum()), geomean(held), bootstrap_geomean_ci(held, seed),
                        geomean(same), bootstrap_geomean_ci(same, seed))  # fmt: skip


def size_columns(from_sizes: np.ndarray, to_sizes: np.ndarray) -> np.ndarray:
    """For each size of ``from_sizes``, its column in ``to_sizes`` (-1 where it is absent)."""
    where = {(int(wc), int(wr)): i for i, (wc, wr) in enumerate(to_sizes)}
    return np.array([where.get((int(wc), int(wr)), -1) for wc, wr in from_sizes], dtype=np.int64)


def match_rows(data: WgDataset, rounds: RoundSamples, tolerance: float = 1e-3) -> dict[int, int]:
    """Row of ``data`` -> scenario of ``rounds`` for the scenarios whose table is these rounds:
    the same device, kernel and dataset labels, and the table's times the medians of every
    round (within ``tolerance`` in log time), which tells apart synthetic stencils of one name."""
    cols = size_columns(rounds.sizes, data.sizes)
    present = cols >= 0
    med = _medians(rounds.samples)[:, present]
    by_name: dict[tuple[str, str, str], list[int]] = {}
    for i in range(len(data)):
        by_name.setdefault(
            (str(data.device[i]), str(data.kernel[i]), str(data.dataset[i])), []
        ).append(i)
    out: dict[int, int] = {}
    for j in range(len(rounds.device)):
        name = (str(rounds.device[j]), str(rounds.kernel[j]), str(rounds.dataset[j]))
        for i in by_name.get(name, []):
            table = data.runtimes[i, cols[present]]
            both = np.isfinite(table) & np.isfinite(med[j])
            if i not in out and both.any() and np.array_equal(np.isfinite(table), np.isfinite(med[j])) \
                    and np.max(np.abs(np.log(table[both] / med[j, both]))) < tolerance:  # fmt: skip
                out[i] = j
                break
    return out


@dataclass(frozen=True)
class HeldOutReport:
    """An evaluation's choices scored on one collection of rounds behind its table."""

    samples: str  # the collection's name
    split: Split
    rounds: int
    matched: int  # test scenarios of the evaluation found in the collection
    scores: tuple[HeldOutScore, ...]  # the method's choices, then the oracle's and w(32x4)'s

    def to_json(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "split": self.split.value,
            "rounds": self.rounds,
            "matched": self.matched,
            "scores": [s.to_json() for s in self.scores],
        }


def heldout_report(
    data: WgDataset,
    result: EvalResult,
    rounds: RoundSamples,
    split: Split = Split.HALVES,
    seed: int = 0,
) -> HeldOutReport:
    """``result``'s choices (each made with its scenario left out of training) on the test
    scenarios whose table ``rounds`` holds, beside the table's oracle and w(32x4) there."""
    match = match_rows(data, rounds)
    cols = size_columns(data.sizes, rounds.sizes)
    tests = [(t, c) for t, c in result.choices if t in match]
    rows = np.array([match[t] for t, _ in tests], dtype=np.int64)
    picks = {result.method: np.array([cols[c] for _, c in tests], dtype=np.int64),
             "oracle": np.array([cols[data.oracle[t]] for t, _ in tests], dtype=np.int64)}  # fmt: skip
    expert = data.column(32, 4)
    if expert is not None:
        picks["w(32x4)"] = np.full(len(tests), cols[expert], dtype=np.int64)
    sub = rounds.samples[rows] if len(rows) else rounds.samples[:0]
    scores = tuple(score(sub, p, name, split, seed) for name, p in picks.items())
    return HeldOutReport(rounds.name, split, rounds.samples.shape[2], len(tests), scores)
