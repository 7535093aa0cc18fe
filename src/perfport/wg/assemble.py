"""One work-group-size dataset from several sources: saved datasets, and stores whose
campaigns are either added as new scenarios or replace the scenarios they measured again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfport._core import PerfportError, SpecError
from perfport.store import Store
from perfport.wg.dataset import (
    WgDataset,
    drop_duplicates,
    load_dataset,
    merge_datasets,
    replace_scenarios,
)
from perfport.wg.from_store import LeftOut, NoCampaignsError, dataset_from_store, own_stencils


class UnknownDevicesError(PerfportError):
    """Devices asked to be dropped that no dataset has."""

    def __init__(self, unknown: Sequence[str], known: Sequence[str]) -> None:
        self.unknown, self.known = tuple(unknown), tuple(known)
        super().__init__(f"no scenario is on {', '.join(unknown)}; devices: {', '.join(known)}")


@dataclass(frozen=True)
class AssembledDataset:
    data: WgDataset
    superseded: WgDataset | None  # the replaced rows as they were (with replace only)
    duplicates: int = 0  # scenarios read twice (identical rows), kept once
    empty_stores: tuple[str, ...] = ()  # stores without a stencil campaign, skipped
    # Per store, the stencils (not built in) whose complete campaigns were left out, and why.
    left_out: tuple[tuple[str, tuple[LeftOut, ...]], ...] = ()
    described: tuple[str, ...] = ()  # the described stencils whose campaigns were read
    described_scenarios: int = 0  # the dataset's scenarios of those stencils

    @property
    def replaced(self) -> int:
        return 0 if self.superseded is None else len(self.superseded)


def assemble_dataset(
    datasets: Sequence[str | Path],
    stores: Sequence[str | Path],
    drop_devices: Sequence[str] = (),
    replace: bool = False,
) -> AssembledDataset:
    """The scenarios of ``datasets`` without those on ``drop_devices`` (device labels), and
    those of the stores' complete stencil campaigns (built in and described): appended, or
    with ``replace``, taking the place of the scenarios they measured again. A scenario read
    twice (identical rows) is kept once."""
    parts = [load_dataset(path) for path in datasets]
    if drop_devices:
        labels = {str(d) for part in parts for d in part.device}
        unknown = sorted(set(drop_devices) - labels)
        if unknown:
            raise UnknownDevicesError(unknown, sorted(labels))
        parts = [p.subset(np.flatnonzero(~np.isin(p.device, drop_devices))) for p in parts]
    stored, empty, left_out, described = [], [], [], set[str]()
    for db in stores:
        with Store(db, create=False) as store:
            own = own_stencils(store)
            if own.left_out:
                left_out.append((str(db), own.left_out))
            described.update(own.names)
            try:
                stored.append(dataset_from_store(store, own))
            except NoCampaignsError:
                empty.append(str(db))  # another store may hold them
    if not stored and stores and (replace or not parts):
        why = "; ".join(sorted({f"{o.kernel}: {o.why}" for _, out in left_out for o in out}))
        also = f" (left out {why})" if why else ""
        raise PerfportError(f"no stored stencil campaign in {', '.join(empty)}{also}; run "
                            "'perfport wg collect' or 'perfport tune' first")  # fmt: skip
    old = None
    if replace:
        data, old = replace_scenarios(merge_datasets(parts), merge_datasets(stored))
    else:
        data = merge_datasets(parts + stored)
    data, duplicates = drop_duplicates(data)
    names = tuple(sorted(described))
    in_own = int(np.isin(data.kernel, names).sum()) if names else 0
    return AssembledDataset(data, old, duplicates, tuple(empty), tuple(left_out), names, in_own)


def keep_superseded(archived: WgDataset | None, rows: WgDataset, path: str | Path) -> WgDataset:
    """The archive at ``path`` of rows that replaces superseded (``archived``, None where it
    is new) with ``rows`` added: each replace adds the re-measurements it displaced. A row it
    already holds is kept once (a run repeated after one cut short)."""
    if archived is None:
        return rows
    if archived.feature_names != rows.feature_names:
        raise SpecError(f"{path}: the archive has other features than this dataset (written by "
                        "another perfport version); give another --superseded path")  # fmt: skip
    kept, _ = drop_duplicates(merge_datasets([archived, rows]))
    return kept
