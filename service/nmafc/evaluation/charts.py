"""PNG charts (matplotlib from the ``bench`` extra, imported only when a chart is drawn)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nmafc.errors import MissingExtra
from nmafc.evaluation.loaders import LOCOMO_CATEGORIES
from nmafc.evaluation.scoring import SCORED_CATEGORIES


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, or MissingExtra naming the install."""
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingExtra(
            "Drawing benchmark charts needs matplotlib.", fix="pip install 'nmafc[bench]'"
        ) from exc
    matplotlib.use("Agg")  # headless: no display on servers and CI
    import matplotlib.pyplot as plt

    return plt


def grouped_bars(
    path: Path,
    series: Mapping[str, Mapping[str, float | None]],
    groups: Sequence[tuple[str, str]],
    *,
    title: str,
    ylabel: str,
) -> None:
    """One group of bars per (key, label) in ``groups``, one bar per series; None draws 0."""
    plt = pyplot()
    arms = list(series)
    width = 0.8 / max(1, len(arms))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(groups) + 2), 4.2))
    for n, arm in enumerate(arms):
        xs = [g + (n - (len(arms) - 1) / 2) * width for g in range(len(groups))]
        ys = [series[arm].get(key) or 0.0 for key, _ in groups]
        bars = ax.bar(xs, ys, width, label=arm)
        ax.bar_label(bars, labels=[f"{y:.2f}" for y in ys], fontsize=7, padding=1)
    ax.set_xticks(range(len(groups)), [label for _, label in groups], fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def lines(
    path: Path,
    xs: Sequence[int],
    series: Mapping[str, Sequence[float | None]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
) -> None:
    """One line per series over ``xs``; missing points are left out."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for arm, ys in series.items():
        points = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=arm)
    ax.set_xticks(list(xs))
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def locomo_charts(out: Path, summary: Mapping[str, Any]) -> list[Path]:
    """per_category.png, and accuracy_vs_budget.png when several budgets ran."""
    arms = summary["arms"]
    groups = [(c, f"{c} {LOCOMO_CATEGORIES[c]}") for c in SCORED_CATEGORIES] + [("all", "all")]
    path = out / "per_category.png"
    grouped_bars(
        path,
        {a: arms[a]["full_evidence_hit"] for a in arms},
        groups,
        title=f"LoCoMo full_evidence_hit per category ({summary['settings']['budget']} tokens)",
        ylabel="full_evidence_hit",
    )
    written = [path]
    budgets = summary.get("budgets")
    if budgets:
        xs = [int(b) for b in budgets]
        series = {
            a: [budgets[b]["arms"][a]["full_evidence_hit"]["all"] for b in budgets] for a in arms
        }
        path = out / "accuracy_vs_budget.png"
        lines(
            path,
            xs,
            series,
            title="LoCoMo full_evidence_hit (categories 1–4) vs budget",
            xlabel="budget (tokens)",
            ylabel="full_evidence_hit",
        )
        written.append(path)
    return written


def longmemeval_charts(out: Path, summary: Mapping[str, Any]) -> list[Path]:
    """per_category.png: session recall_any@5 per question type."""
    arms = summary["arms"]
    groups = [
        (t, t.replace("single-session-", "ss-")) for t in summary["data"]["questions_by_type"]
    ]
    path = out / "per_category.png"
    grouped_bars(
        path,
        {a: arms[a]["session_recall_any@5"] for a in arms},
        [*groups, ("all", "all")],
        title="LongMemEval session recall_any@5 per question type",
        ylabel="recall_any@5",
    )
    return [path]
