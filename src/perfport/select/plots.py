"""The figures of Lawson's kernel-selection paper for perfport's evaluation results
(matplotlib: pip install 'perfport[plots]'): the fraction of the optimum each pruning method
keeps against k, one panel per normalisation (their Figures 5-6), and each classifier's
fraction per k beside the chosen set's limit (their Tables 1-2 as a chart)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core.optional import require
from perfport.select.errors import SelectError
from perfport.select.evaluate import SelectResult, classifier_table, pruning_table
from perfport.select.normalise import Normalisation
from perfport.select.prune import Pruning


def _pyplot() -> Any:
    matplotlib = require("matplotlib", "plots", "Plots")
    matplotlib.use("Agg")  # files only; no display needed
    return require("matplotlib.pyplot", "plots", "Plots")


def plot_pruning(results: Sequence[SelectResult], path: str | Path, title: str = "") -> None:
    """Figures 5-6: per normalisation, each pruning method's max achievable fraction (percent)
    against the number of configurations k."""
    norms = list(dict.fromkeys(r.normalisation for r in results))
    if not norms:
        raise SelectError("no results to plot")
    plt = _pyplot()
    cols = min(2, len(norms))
    rows = (len(norms) + cols - 1) // cols
    fig, axes = plt.subplots(
        rows, cols, figsize=(6 * cols, 4 * rows), squeeze=False, sharex=True, sharey=True
    )
    for ax, norm in zip(axes.flat, norms, strict=False):
        table = pruning_table(results, norm)
        for name, values in table.rows:
            ax.plot(table.ks, 100 * np.asarray(values), marker="o", label=name)
        ax.set_title(f"{norm} normalisation")
        ax.set_xlabel("configurations k")
        ax.set_ylabel("% of optimal performance")
        ax.set_xticks(table.ks)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(norms) :]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize="small")
    fig.suptitle(title or "Performance reachable within the chosen configurations")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_classifiers(
    results: Sequence[SelectResult],
    path: str | Path,
    normalisation: Normalisation | str = Normalisation.RELATIVE,
    pruning: Pruning | str = Pruning.PCA_KMEANS,
    title: str = "",
) -> None:
    """Tables 1-2 as a chart: per k, a bar per classifier (percent of the optimum) and a dashed
    line at the max achievable within the chosen set."""
    table = classifier_table(results, normalisation, pruning)
    classifiers = [(name, v) for name, v in table.rows if name != "max achievable"]
    if not classifiers:
        raise SelectError(f"no results for {Pruning(pruning).value} with {normalisation}")
    limit = np.asarray(table.rows[-1][1])
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(8, 1.6 * len(table.ks) + 6), 4.5))
    width = 0.8 / len(classifiers)
    centres = np.arange(len(table.ks))
    # tab20 tells up to 20 classifiers apart (the default cycle repeats after 10): its dark
    # shades first, then the light ones, so that neighbouring bars differ in hue.
    order = np.r_[0:20:2, 1:20:2]
    colours = plt.get_cmap("tab20")(order[np.arange(len(classifiers)) % 20])
    for n, (name, values) in enumerate(classifiers):
        offset = (n - (len(classifiers) - 1) / 2) * width
        ax.bar(centres + offset, 100 * np.asarray(values), width, label=name, color=colours[n])
    for c, value in zip(centres, limit, strict=True):
        ax.hlines(100 * value, c - 0.45, c + 0.45, colors="black", linestyles="dashed")
    ax.plot([], [], "k--", label="max achievable")  # legend entry for the dashed lines
    ax.set_xticks(centres, [str(k) for k in table.ks])
    ax.set_xlabel("configurations k")
    ax.set_ylabel("% of optimal performance")
    low = np.nanmin([np.nanmin(v) for _, v in classifiers])
    ax.set_ylim(max(0.0, 100 * low - 10), 101)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))  # off the bars
    norm, method = Normalisation(normalisation).value, Pruning(pruning).value
    ax.set_title(title or f"Runtime selectors among the configurations chosen by {method} ({norm})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
