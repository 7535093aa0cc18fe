"""Taking back a campaign row that a session opened and then stopped at its caller's bad
input (a reference that raises, a strategy that cannot run) before anything was stored: left,
it would read as a campaign that failed on the kernel, with no results."""

from __future__ import annotations

from perfport.store.store import Campaign, Store


def has_campaign(store: Store, key: str) -> bool:
    """Whether the store holds a campaign with this key (a session about to open it resumes)."""
    return bool(store.query("SELECT 1 FROM campaigns WHERE key = ?", (key,)))


def discard_empty_campaign(store: Store, campaign: Campaign) -> bool:
    """Delete ``campaign`` if it holds no result and no writer's claim (another session may be
    measuring it); True if it was deleted. A campaign with results is never touched."""
    with store.atomic():
        cur = store._conn.execute(  # the store's one connection, as every store module writes
            "DELETE FROM campaigns WHERE id = ? "
            "AND NOT EXISTS (SELECT 1 FROM results WHERE campaign_id = ?) "
            "AND NOT EXISTS (SELECT 1 FROM claims WHERE campaign_id = ?)",
            (campaign.id, campaign.id, campaign.id),
        )
    return bool(cur.rowcount)
