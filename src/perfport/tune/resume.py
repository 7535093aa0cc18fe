"""What a resumed campaign's stored results must agree with before anything is measured.

A campaign key names a restriction by its text, so a Python restriction whose closure
variable, global or ``functools.partial`` argument changed keeps its key (keys cannot change:
users resume by them). Resumed, such a campaign would report a best the current spec forbids;
it is refused instead, leaving the stored results as they are. Only a key perfport derived is
checked: every other change to the space (a parameter's values) changes that key, while a
campaign the caller named (``--campaign``) may go on under a changed spec, as it always could.
"""

from __future__ import annotations

import json

import numpy as np

from perfport._core import Config, Outcome, StoreError
from perfport.space import Space
from perfport.store import Store

# A stored configuration outside the space is expected where the device refused it: a listed
# configuration beyond the device's limits is stored as pruned.
_STORED_CONFIGS = (
    "SELECT c.key FROM results r JOIN campaigns k ON k.id = r.campaign_id "
    "JOIN configs c ON c.id = r.config_id WHERE k.key = ? AND r.outcome != ?"
)


def check_resumable(store: Store, key: str, space: Space) -> None:
    """Refuse to resume campaign ``key`` when this run's ``space`` (its restrictions and the
    device's limits) excludes configurations the campaign holds results for."""
    rows = store.query(_STORED_CONFIGS, (key, Outcome.PRUNED.value))
    if not rows:
        return  # a new campaign, or one with nothing measured yet
    configs = [json.loads(row[0]) for row in rows]
    found = space.indices(configs)
    outside = np.flatnonzero(found < 0)
    if not len(outside):
        return
    example = dict(Config.of(configs[int(outside[0])]))
    raise StoreError(
        f"campaign {key!r} in {store.path} holds {len(outside)} of {len(configs)} stored "
        f"configurations this run's restrictions forbid (e.g. {example}): a restriction "
        "perfport knows only by its text (a Python function's variable or global, a "
        "functools.partial) changed since they were measured; give a new key "
        "(--campaign NEW_KEY, or campaign= in Python) or restore the restriction"
    )
