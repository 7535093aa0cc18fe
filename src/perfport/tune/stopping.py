"""What an interrupt (Ctrl-C, SIGTERM) makes of a campaign's status.

Only an interrupt that stops the search leaves a campaign ``interrupted``. Once the search has
ended, its results are what the campaign finished with: an interrupt while they are re-timed
(``--confirm``), while the worker stops or while the status is stored keeps the search's
status. Before the search begins nothing is stored, so a campaign that had finished keeps the
status it had.
"""

from __future__ import annotations

from perfport._core import StoreError
from perfport._core.interrupts import take_held
from perfport.store import Campaign, CampaignStatus, Store
from perfport.tune.result import Stage


def status_before(store: Store, key: str) -> CampaignStatus | None:
    """The campaign's status before a session opens it (None: a new campaign)."""
    try:
        return store.campaign(key).status
    except StoreError:
        return None


def stopped_status(
    stage: Stage, status: CampaignStatus, before: CampaignStatus | None
) -> CampaignStatus:
    """The campaign's status after an interrupt at ``stage``: ``status`` is the search's (when
    it ended), ``before`` the campaign's before the session opened it."""
    if stage is Stage.START and before is not None and before.finished:
        return before
    if stage in (Stage.CONFIRM, Stage.END):
        return status
    return CampaignStatus.INTERRUPTED


def final_status(
    store: Store, record: Campaign, status: CampaignStatus
) -> tuple[CampaignStatus, bool]:
    """Store the session's final status, and say whether a signal was held (it arrived while
    the worker was being stopped or the status written): interrupted then, unless the search
    had finished."""
    held = take_held()
    if held and not status.finished:
        status = CampaignStatus.INTERRUPTED
    store.set_status(record, status)
    if take_held():
        held = True
        if status is not CampaignStatus.INTERRUPTED and not status.finished:
            status = CampaignStatus.INTERRUPTED
            store.set_status(record, status)
    return status, held
