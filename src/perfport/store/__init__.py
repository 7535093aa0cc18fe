"""Layer 2: the results database (SQLite by default): devices, kernels by source hash,
problems, campaigns, configurations, outcomes and every sample; resume; export."""

from perfport.store.best import best_results
from perfport.store.formats.tabular import write_csv, write_json
from perfport.store.queries import (
    EXPORT_COLUMNS,
    BestResult,
    BriefRow,
    ResultRow,
    brief_rows,
    declared_params,
    export_keys,
    export_rows,
    one_group,
)
from perfport.store.reader import ReadOnlyStore, count_outcomes_of_strategy
from perfport.store.scenarios import ScenarioResult, complete_results, refused_configs
from perfport.store.schema import SCHEMA_VERSION
from perfport.store.store import Campaign, CampaignStatus, ClaimState, Store

__all__ = [
    "EXPORT_COLUMNS",
    "SCHEMA_VERSION",
    "BestResult",
    "BriefRow",
    "Campaign",
    "CampaignStatus",
    "ClaimState",
    "ReadOnlyStore",
    "ResultRow",
    "ScenarioResult",
    "Store",
    "best_results",
    "brief_rows",
    "complete_results",
    "count_outcomes_of_strategy",
    "declared_params",
    "export_keys",
    "export_rows",
    "one_group",
    "refused_configs",
    "write_csv",
    "write_json",
]
