"""Layer 2: the results database (SQLite by default): devices, kernels by source and name,
problems, campaigns, configurations, outcomes and every sample; resume; export."""

from perfport.store.best import best_results
from perfport.store.ceilings import save_ceilings, stored_ceilings
from perfport.store.described import declared_params
from perfport.store.failures import campaign_settings, earlier_failures
from perfport.store.formats.tabular import write_csv, write_json
from perfport.store.queries import (
    EXPORT_COLUMNS,
    BestResult,
    BriefRow,
    ResultRow,
    TransferSummary,
    brief_rows,
    export_keys,
    export_rows,
    one_group,
    transfer_summary,
)
from perfport.store.reader import ReadOnlyStore, count_outcomes_of_strategy
from perfport.store.retime import add_samples
from perfport.store.scenarios import (
    REPORTED,
    ScenarioResult,
    complete_results,
    refused_configs,
)
from perfport.store.schema import SCHEMA_VERSION
from perfport.store.store import Campaign, CampaignStatus, ClaimState, Store

__all__ = [
    "EXPORT_COLUMNS",
    "REPORTED",
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
    "TransferSummary",
    "add_samples",
    "best_results",
    "brief_rows",
    "campaign_settings",
    "complete_results",
    "count_outcomes_of_strategy",
    "declared_params",
    "earlier_failures",
    "export_keys",
    "export_rows",
    "one_group",
    "refused_configs",
    "save_ceilings",
    "stored_ceilings",
    "transfer_summary",
    "write_csv",
    "write_json",
]
