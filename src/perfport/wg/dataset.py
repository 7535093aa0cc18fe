"""Work-group-size data: scenarios x work-group sizes, with runtimes where a size ran.

A scenario is a (device, kernel, dataset) combination with a feature vector. ``runtimes`` is
NaN where a size did not run: above the scenario's maximum work-group size (illegal, known in
advance) or at or below it (refused by the driver, found only by trying).
"""

from __future__ import annotations

import csv
import os
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from perfport._core import SpecError
from perfport.wg.npz_arrays import Expected, Held, check_rows, checked_array

_FIX = "write it again with 'perfport wg dataset'"


@dataclass(frozen=True)
class WgDataset:
    sizes: np.ndarray  # (W, 2): (wc, wr) per column
    runtimes: np.ndarray  # (S, W) ms, NaN = did not run
    max_wg: np.ndarray  # (S,) maximum work-group size of each scenario
    features: np.ndarray  # (S, F)
    feature_names: tuple[str, ...]
    device: np.ndarray  # (S,) labels for the leave-one-out partitions
    kernel: np.ndarray
    dataset: np.ndarray
    synthetic: np.ndarray  # (S,) bool: from the synthetic template

    def __post_init__(self) -> None:
        s, w = self.runtimes.shape
        labels = (self.max_wg, self.device, self.kernel, self.dataset, self.synthetic)
        if (
            self.sizes.shape != (w, 2)
            or self.features.shape[0] != s
            or any(len(a) != s for a in labels)
        ):
            raise ValueError("inconsistent work-group dataset shapes")

    def __len__(self) -> int:
        return len(self.runtimes)

    def subset(self, rows: np.ndarray) -> WgDataset:
        return WgDataset(
            self.sizes, self.runtimes[rows], self.max_wg[rows], self.features[rows], self.feature_names,
            self.device[rows], self.kernel[rows], self.dataset[rows], self.synthetic[rows],
        )  # fmt: skip

    def with_features(self, names: Sequence[str]) -> WgDataset:
        """The same scenarios with only the feature columns ``names``, in that order (a model
        trained on ``perfport.features.COMPILE_FREE_FEATURES`` predicts without a compile)."""
        missing = [n for n in names if n not in self.feature_names]
        if missing:
            raise SpecError(
                f"the dataset has no features {missing[:3]}; it has {self.feature_names}"
            )
        columns = [self.feature_names.index(n) for n in names]
        return WgDataset(
            self.sizes, self.runtimes, self.max_wg, self.features[:, columns], tuple(names),
            self.device, self.kernel, self.dataset, self.synthetic,
        )  # fmt: skip

    @property
    def valid(self) -> np.ndarray:
        """(S, W): within each scenario's maximum work-group size."""
        return (self.sizes[:, 0] * self.sizes[:, 1])[None, :] <= self.max_wg[:, None]

    @property
    def legal(self) -> np.ndarray:
        """(S, W): the size ran."""
        return np.isfinite(self.runtimes)

    @property
    def oracle(self) -> np.ndarray:
        """(S,) column of the fastest size of each scenario."""
        return np.nanargmin(np.where(self.legal, self.runtimes, np.inf), axis=1)

    def column(self, wc: int, wr: int) -> int | None:
        hit = np.flatnonzero((self.sizes[:, 0] == wc) & (self.sizes[:, 1] == wr))
        return int(hit[0]) if len(hit) else None


def load_cummins_csv(path: str | Path) -> WgDataset:
    """Cummins' pilot data (msc-thesis ``runtimes.csv``): one row per scenario, one column per
    work-group size named ``{wc}x{wr}``, mean runtime in ms, 0 where nothing was measured.

    Features are those the file has: the device (one-hot by name) and its count, the maximum
    work-group size, the four border sizes and the data size."""
    path = Path(path)
    try:
        with path.open(newline="") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            header = reader.fieldnames or []
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise SpecError(f"{path}: cannot read it as CSV ({exc})") from None
    needed = {"host", "dev_name", "dev_count", "kern_checksum", "north", "south", "east", "west",
              "data_width", "data_height", "max_wg_size"}  # fmt: skip
    if needed - set(header):
        raise SpecError(
            f"{path}: not Cummins' runtimes.csv (needs columns {', '.join(sorted(needed))})"
        )
    if not rows:
        raise SpecError(f"{path}: no scenarios, only a header")
    for line, r in enumerate(rows, start=2):
        if None in r.values() or None in r:
            raise SpecError(f"{path}: line {line} does not have one cell per column of the header")
    columns = [c for c in header if "x" in c and c.replace("x", "").isdigit()]
    sizes = np.array([[int(a) for a in c.split("x")] for c in columns])
    try:
        runtimes = np.array([[float(r[c]) for c in columns] for r in rows])
        numeric = {
            k: np.array([float(r[k]) for r in rows])
            for k in needed - {"host", "dev_name", "kern_checksum"}
        }
    except ValueError as exc:
        raise SpecError(f"{path}: a value is not a number ({exc})") from None
    if not all(np.isfinite(v).all() for v in (runtimes, *numeric.values())):
        raise SpecError(f"{path}: a value is NaN or infinite; write 0 where nothing was measured")
    runtimes[runtimes <= 0] = np.nan
    devices = np.array(
        [f"{r['host'].strip()}:{r['dev_name'].strip()}x{r['dev_count'].strip()}" for r in rows]
    )
    names = sorted({r["dev_name"].strip() for r in rows})
    one_hot = np.array([[float(r["dev_name"].strip() == n) for n in names] for r in rows])
    feature_names = (
        *(f"device_is_{n}" for n in names), "device_count", "max_wg_size",
        "north", "south", "east", "west", "data_width", "data_height",
    )  # fmt: skip
    features = np.column_stack(
        [one_hot, numeric["dev_count"], numeric["max_wg_size"], numeric["north"], numeric["south"],
         numeric["east"], numeric["west"], numeric["data_width"], numeric["data_height"]]
    )  # fmt: skip
    return WgDataset(
        sizes=sizes,
        runtimes=runtimes,
        max_wg=numeric["max_wg_size"].astype(np.int64),
        features=features,
        feature_names=feature_names,
        device=devices,
        kernel=np.array([r["kern_checksum"] for r in rows]),
        dataset=np.array(
            [f"{int(float(r['data_width']))}x{int(float(r['data_height']))}" for r in rows]
        ),
        synthetic=np.ones(
            len(rows), dtype=bool
        ),  # the pilot's "SimpleBig" kernels are all synthetic
    )


def merge_datasets(parts: Sequence[WgDataset]) -> WgDataset:
    """One dataset of the scenarios of all ``parts`` (e.g. one store per device); a size that
    a part never listed is NaN there."""
    if not parts:
        raise ValueError("nothing to merge")
    names = parts[0].feature_names
    if any(p.feature_names != names for p in parts):
        raise SpecError(
            "the datasets have different features; rebuild them with one perfport version"
        )
    sizes = sorted({(int(wc), int(wr)) for p in parts for wc, wr in p.sizes})
    column = {s: i for i, s in enumerate(sizes)}
    runtimes = []
    for p in parts:
        block = np.full((len(p), len(sizes)), np.nan)
        block[:, [column[(int(wc), int(wr))] for wc, wr in p.sizes]] = p.runtimes
        runtimes.append(block)
    return WgDataset(
        np.array(sizes), np.vstack(runtimes), np.concatenate([p.max_wg for p in parts]),
        np.vstack([p.features for p in parts]), names,
        *(np.concatenate([getattr(p, f) for p in parts]) for f in ("device", "kernel", "dataset", "synthetic")),
    )  # fmt: skip


def common_columns(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns of the (wc, wr) sizes both size lists have: (first's columns, second's)."""
    index = {(int(wc), int(wr)): k for k, (wc, wr) in enumerate(first)}
    pairs = [(index[(int(wc), int(wr))], k) for k, (wc, wr) in enumerate(second)
             if (int(wc), int(wr)) in index]  # fmt: skip
    if not pairs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    a, b = zip(*pairs, strict=True)
    return np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)


def _name(data: WgDataset, row: int) -> tuple[str, str, str]:
    return str(data.device[row]), str(data.kernel[row]), str(data.dataset[row])


def match_scenarios(first: WgDataset, second: WgDataset) -> tuple[list[tuple[int, int]], list[int]]:
    """Pairs (row in first, row in second) of the same scenario, and second's unmatched rows.

    A scenario is named by its device, kernel and dataset labels, and its features must be
    equal too (synthetic scenarios differ only in their borders, types and complexity, which
    are features, so one of a name is not another's re-measurement). A row of ``second`` with
    no such row, or with several, is unmatched; so is one whose match is already taken.
    """
    by_name: dict[tuple[str, str, str], list[int]] = {}
    for i in range(len(first)):
        by_name.setdefault(_name(first, i), []).append(i)
    pairs: list[tuple[int, int]] = []
    unmatched: list[int] = []
    taken: set[int] = set()
    for j in range(len(second)):
        candidates = [i for i in by_name.get(_name(second, j), []) if np.allclose(
            first.features[i], second.features[j], rtol=1e-6, atol=0.0, equal_nan=True)]  # fmt: skip
        if len(candidates) != 1 or candidates[0] in taken:
            unmatched.append(j)
            continue
        taken.add(candidates[0])
        pairs.append((candidates[0], j))
    return pairs, unmatched


def drop_duplicates(data: WgDataset) -> tuple[WgDataset, int]:
    """``data`` with each scenario kept once, and how many rows were dropped. A duplicate has
    a kept row's labels, features (as ``match_scenarios`` compares them), limit and times:
    the same measurement read twice (a dataset merged with the store it came from, a store
    given twice), which would sit in a training fold and its test fold at once. The same
    scenario with other times is a re-measurement and stays (``replace_scenarios`` merges
    those)."""
    kept: list[int] = []
    by_name: dict[tuple[str, str, str], list[int]] = {}
    for j in range(len(data)):
        same = by_name.setdefault(_name(data, j), [])
        if not any(_identical(data, i, j) for i in same):
            same.append(j)
            kept.append(j)
    dropped = len(data) - len(kept)
    return (data.subset(np.array(kept, dtype=np.int64)) if dropped else data), dropped


def _identical(data: WgDataset, i: int, j: int) -> bool:
    return (
        data.max_wg[i] == data.max_wg[j]
        and np.allclose(data.features[i], data.features[j], rtol=1e-6, atol=0.0, equal_nan=True)
        and np.array_equal(data.runtimes[i], data.runtimes[j], equal_nan=True)
    )


def replace_scenarios(base: WgDataset, new: WgDataset) -> tuple[WgDataset, WgDataset]:
    """``base`` with its scenarios that ``new`` measured again taking the new times (over the
    sizes ``new`` lists; the others become NaN), and ``new``'s other scenarios appended; and the
    rows of ``base`` that changed, as they were (to keep as a re-measurement). A scenario whose
    times are already ``new``'s is left alone, so replacing twice changes nothing."""
    if base.feature_names != new.feature_names:
        raise SpecError(
            "the datasets have different features; rebuild them with one perfport version"
        )
    pairs, unmatched = match_scenarios(base, new)
    cols_base, cols_new = common_columns(base.sizes, new.sizes)
    runtimes = base.runtimes.copy()
    changed = []
    for i, j in pairs:
        row = np.full(base.runtimes.shape[1], np.nan)
        row[cols_base] = new.runtimes[j, cols_new]
        if not np.array_equal(row, runtimes[i], equal_nan=True):
            changed.append(i)
            runtimes[i] = row
    replaced = replace(base, runtimes=runtimes)
    if unmatched:
        replaced = merge_datasets([replaced, new.subset(np.array(unmatched))])
    return replaced, base.subset(np.array(changed, dtype=np.int64))


def is_dataset_file(path: str | Path) -> bool:
    """Whether ``path`` holds a dataset 'perfport wg dataset' wrote (an .npz with its arrays)."""
    try:
        with zipfile.ZipFile(path) as z:
            return {"runtimes.npy", "sizes.npy", "feature_names.npy"} <= set(z.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def save_dataset(data: WgDataset, path: str | Path) -> None:
    """A compressed .npz with every array and the feature names, at exactly ``path`` (numpy
    would add ``.npz`` to a name without it, and the user would not find the file)."""
    path = Path(path)
    # Written aside and renamed: an interrupted run leaves the old file whole, never half.
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(staging, "wb") as out:
            np.savez_compressed(
                out, sizes=data.sizes, runtimes=data.runtimes, max_wg=data.max_wg,
                features=data.features, feature_names=np.array(data.feature_names),
                device=data.device, kernel=data.kernel, dataset=data.dataset,
                synthetic=data.synthetic,
            )  # fmt: skip
        os.replace(staging, path)
    finally:
        staging.unlink(missing_ok=True)


def load_archive(path: str | Path) -> WgDataset | None:
    """The dataset at ``path`` to add rows to (``save_dataset``'s .npz, checked), or None where
    there is no file or it holds no scenarios (earlier versions wrote such a file when a
    replace replaced nothing): then there is nothing in it to keep."""
    path = Path(path)
    if not path.exists():
        return None
    data = _load_npz(path)
    if len(data) == 0:
        return None
    check_values(data, path)
    return data


def load_dataset(path: str | Path) -> WgDataset:
    """A dataset from ``save_dataset`` (.npz) or Cummins' runtimes.csv (.csv), its values
    checked (``check_values``)."""
    path = Path(path)
    if not path.exists():  # not "not a dataset": the file is simply not there (a typo)
        raise SpecError(f"{path}: no such file; give the path of a dataset that 'perfport wg "
                        "dataset' wrote, or Cummins' runtimes.csv")  # fmt: skip
    data = load_cummins_csv(path) if path.suffix.lower() == ".csv" else _load_npz(path)
    check_values(data, path)
    return data


# The largest work-group (wc * wr) a dataset may list: beyond any device's limit, and far
# from int64's overflow in wc * wr.
MAX_WORK_GROUP = 2**31 - 1
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_values(data: WgDataset, path: str | Path) -> None:
    """Refuse a dataset whose values no evaluation or training can use (SpecError naming the
    file, the problem and the fix). NaN is a time's one legitimate gap: a size that did not
    run (illegal or refused); a time is otherwise positive and finite, and each scenario
    needs at least one."""
    if len(data) == 0:
        raise SpecError(f"{path}: the dataset holds no scenarios; {_FIX} from a store with "
                        "complete campaigns")  # fmt: skip
    if len(data.feature_names) != data.features.shape[1]:
        raise SpecError(f"{path}: {len(data.feature_names)} feature names for "
                        f"{data.features.shape[1]} feature columns; {_FIX}")  # fmt: skip
    twice = next((n for i, n in enumerate(data.feature_names) if n in data.feature_names[:i]), None)
    if twice is not None:  # a model reads a feature by its name: which column would it be?
        raise SpecError(f"{path}: the feature name {twice!r} is listed twice in "
                        f"'feature_names'; {_FIX}")  # fmt: skip
    _check_sizes(data, path)
    for usable, what in ((np.isfinite(data.features), "a NaN or infinite feature"),
                         # scikit-learn's trees compare features in float32, where it is infinite
                         (np.abs(data.features) <= _FLOAT32_MAX,
                          f"a feature beyond float32's range ({_FLOAT32_MAX:.3g})")):  # fmt: skip
        if not usable.all():
            row = int(np.flatnonzero(~usable.all(axis=1))[0])
            raise SpecError(f"{path}: scenario {row} ({', '.join(_name(data, row))}) has "
                            f"{what}; {_FIX}")  # fmt: skip
    times = data.runtimes[~np.isnan(data.runtimes)]
    bad = times[~(np.isfinite(times) & (times > 0))]
    if len(bad):
        raise SpecError(f"{path}: {len(bad)} runtimes are not positive and finite (e.g. "
                        f"{bad[0]:g}); a time is in ms, NaN where a size did not run; {_FIX}")  # fmt: skip
    empty = np.flatnonzero(np.isnan(data.runtimes).all(axis=1))
    if len(empty):
        raise SpecError(f"{path}: {len(empty)} scenario(s) have no size that ran (all runtimes "
                        f"NaN; the first: {', '.join(_name(data, int(empty[0])))}); {_FIX}")  # fmt: skip


def _check_sizes(data: WgDataset, path: str | Path) -> None:
    """Each work-group size is listed once, its wc and wr at least 1 and wc * wr at most
    MAX_WORK_GROUP, and each scenario's maximum at least 1: else every size is illegal
    somewhere, and the model fails only when it predicts."""
    sizes = data.sizes.astype(np.float64)  # wc * wr without int64's overflow
    bad = (sizes < 1).any(axis=1) | (sizes.prod(axis=1) > MAX_WORK_GROUP)
    if bad.any():
        wc, wr = data.sizes[np.flatnonzero(bad)[0]]
        raise SpecError(f"{path}: {int(bad.sum())} work-group size(s) in 'sizes' are below 1 "
                        f"or above {MAX_WORK_GROUP} items (e.g. {wc}x{wr}); {_FIX}")  # fmt: skip
    seen: set[tuple[int, int]] = set()
    for wc, wr in data.sizes:
        if (int(wc), int(wr)) in seen:
            raise SpecError(f"{path}: the work-group size {wc}x{wr} is listed twice in 'sizes' "
                            f"(each names one column of 'runtimes'); {_FIX}")  # fmt: skip
        seen.add((int(wc), int(wr)))
    if (data.max_wg < 1).any():
        row = int(np.flatnonzero(data.max_wg < 1)[0])
        raise SpecError(f"{path}: scenario {row} ({', '.join(_name(data, row))}) has a maximum "
                        f"work-group size ('max_wg') of {data.max_wg[row]}, below 1; {_FIX}")  # fmt: skip


# Each array of a saved dataset: what it holds and its dimensions.
_ARRAYS = {
    "sizes": Expected(Held.WHOLE, 2), "runtimes": Expected(Held.NUMBER, 2),
    "max_wg": Expected(Held.WHOLE, 1), "features": Expected(Held.NUMBER, 2),
    "feature_names": Expected(Held.NAME, 1), "device": Expected(Held.NAME, 1),
    "kernel": Expected(Held.NAME, 1), "dataset": Expected(Held.NAME, 1),
    "synthetic": Expected(Held.FLAG, 1),
}  # fmt: skip


def _load_npz(path: Path) -> WgDataset:
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [n for n in _ARRAYS if n not in z.files]
            arrays = {n: z[n] for n in _ARRAYS if n in z.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        # numpy's own message for a text file suggests unpickling it: not ours to suggest.
        why = (
            exc.strerror if isinstance(exc, OSError) and exc.strerror else "unreadable or cut short"
        )
        raise SpecError(
            f"{path}: not a perfport work-group dataset (.npz) or Cummins CSV ({why}); "
            "write one with 'perfport wg dataset'"
        ) from None
    if missing:
        raise SpecError(f"{path}: a work-group dataset lacks {', '.join(missing)}; {_FIX}")
    arrays = {n: checked_array(path, n, a, _ARRAYS[n], _FIX) for n, a in arrays.items()}
    scenarios, columns = arrays["runtimes"].shape
    if arrays["sizes"].shape != (columns, 2):
        raise SpecError(f"{path}: the array 'sizes' has shape {arrays['sizes'].shape}, not "
                        f"({columns}, 2): one (wc, wr) per column of 'runtimes'; {_FIX}")  # fmt: skip
    labels = ("max_wg", "features", "device", "kernel", "dataset", "synthetic")
    check_rows(path, arrays, labels, scenarios, "runtimes", _FIX)
    return WgDataset(**{**arrays, "feature_names": tuple(str(n) for n in arrays["feature_names"])})
