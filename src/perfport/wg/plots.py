"""The figures of Cummins et al. 2016 for a work-group-size dataset (matplotlib:
pip install 'perfport[plots]'): oracle frequencies (their Fig. 2), refused sizes per device
(Fig. 3) and speedups over the human expert's w(32x4) per method (Fig. 6)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core.optional import require
from perfport.wg.dataset import WgDataset
from perfport.wg.evaluate import EvalResult


def save_figures(data: WgDataset, results: Sequence[EvalResult], folder: str | Path) -> None:
    """The three figures as PNG files in ``folder`` (made if missing)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    oracle_heatmap(data, out / "oracle_heatmap.png")
    refused_ratio(data, out / "refused_per_device.png")
    expert_violins(results, out / "speedup_over_expert.png")


def _pyplot() -> Any:
    matplotlib = require("matplotlib", "plots", "Plots")
    matplotlib.use("Agg")  # files only; no display needed
    return require("matplotlib.pyplot", "plots", "Plots")


def oracle_heatmap(data: WgDataset, path: str | Path, limit: int = 100) -> None:
    """How often each (wc, wr) is the oracle, for wc, wr <= limit."""
    plt = _pyplot()
    wcs = sorted({int(c) for c in data.sizes[:, 0] if c <= limit})
    wrs = sorted({int(r) for r in data.sizes[:, 1] if r <= limit})
    counts = np.zeros((len(wrs), len(wcs)))
    for w in data.oracle:
        c, r = (int(v) for v in data.sizes[w])
        if c in wcs and r in wrs:
            counts[wrs.index(r), wcs.index(c)] += 1
    fig, ax = plt.subplots(figsize=(7, 6))
    image = ax.imshow(counts, origin="lower", cmap="viridis")
    ax.set_xticks(range(len(wcs)), wcs, rotation=90)
    ax.set_yticks(range(len(wrs)), wrs)
    ax.set_xlabel("work-group columns wc")
    ax.set_ylabel("work-group rows wr")
    ax.set_title(
        f"Oracle work-group sizes of {len(data)} scenarios ({len(set(data.oracle.tolist()))} distinct)"
    )
    fig.colorbar(image, ax=ax, label="scenarios")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def refused_ratio(data: WgDataset, path: str | Path) -> None:
    """Per device: of the sizes within its limit, the share that did not run."""
    plt = _pyplot()
    devices = sorted(set(data.device.tolist()))
    ratios = []
    for d in devices:
        rows = data.device == d
        valid = data.valid[rows]
        ratios.append(float((valid & ~data.legal[rows]).sum() / max(valid.sum(), 1)))
    fig, ax = plt.subplots(figsize=(11, 0.6 * len(devices) + 1.5))
    ax.barh(range(len(devices)), ratios, color="tab:red")
    ax.set_yticks(range(len(devices)), devices)
    ax.set_xlabel("share of the sizes within the limit that did not run")
    ax.set_title("Refused work-group sizes per device")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def expert_violins(results: Sequence[EvalResult], path: str | Path) -> None:
    """Distributions of speedups over w(32x4), one violin per method (all partitions pooled;
    values above 2.5 drawn at 2.5, as the paper's axis clips them)."""
    plt = _pyplot()
    methods = list(dict.fromkeys(r.method for r in results))
    samples = [
        np.concatenate([r.over_expert for r in results if r.method == m] or [(np.nan,)])
        for m in methods
    ]
    fig, ax = plt.subplots(figsize=(max(6, 0.55 * len(methods)), 5))
    # Outliers far above the axis would flatten the density estimate: clip them to its top.
    ax.violinplot([np.clip(s[np.isfinite(s)], 0, 2.5) for s in samples], showmedians=True)
    ax.axhline(1.0, color="gray", linestyle="--", linewidth=1)
    ax.set_xticks(range(1, len(methods) + 1), methods, rotation=70, ha="right")
    ax.set_ylim(0, 2.5)
    ax.set_ylabel("speedup over w(32x4)")
    ax.set_title("Speedup over the human expert's work-group size")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
