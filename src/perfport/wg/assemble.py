"""One work-group-size dataset from several sources: saved datasets, and stores whose
campaigns are either added as new scenarios or replace the scenarios they measured again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfport._core import PerfportError
from perfport.store import Store
from perfport.wg.dataset import (
    WgDataset,
    drop_duplicates,
    load_dataset,
    merge_datasets,
    replace_scenarios,
)
from perfport.wg.from_store import dataset_from_store


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
    those of the stores' complete stencil campaigns: appended, or with ``replace``, taking
    the place of the scenarios they measured again. A scenario read twice (identical rows) is
    kept once."""
    parts = [load_dataset(path) for path in datasets]
    if drop_devices:
        labels = {str(d) for part in parts for d in part.device}
        unknown = sorted(set(drop_devices) - labels)
        if unknown:
            raise UnknownDevicesError(unknown, sorted(labels))
        parts = [p.subset(np.flatnonzero(~np.isin(p.device, drop_devices))) for p in parts]
    stored = []
    for db in stores:
        with Store(db, create=False) as store:
            stored.append(dataset_from_store(store))
    old = None
    if replace:
        data, old = replace_scenarios(merge_datasets(parts), merge_datasets(stored))
    else:
        data = merge_datasets(parts + stored)
    data, duplicates = drop_duplicates(data)
    return AssembledDataset(data, old, duplicates)
