"""A run page's tables: every score of the run by task, and the manifest facts a reader looks for first.

Pure Python, no Django.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evaluation.engine.registry import METRICS, TASKS
from leaderboard.tables.cells import format_metric


@dataclass
class ScoreSection:
    """Every score of one task of one run: rows of (source, target, [(value text, interval text)])."""

    task: str
    metrics: list[str]
    rows: list[tuple[str, str | None, list[tuple[str, str] | None]]]

    @property
    def pairs(self) -> bool:
        return any(target for _, target, _ in self.rows)


def score_sections(scores: Iterable[dict], language_order: dict[str, int]) -> list[ScoreSection]:
    """Group a run's scores ({task, source, target, metric, value, ci_low, ci_high}) by task, in a
    fixed task, language and metric order, with values formatted for display."""
    grouped: dict[str, dict[tuple[str, str | None], dict[str, dict]]] = {}
    for score in scores:
        grouped.setdefault(score["task"], {}).setdefault((score["source"], score["target"]), {})[score["metric"]] = (
            score
        )

    def rank(order: Sequence[str], key: str) -> tuple[int, str]:
        return (order.index(key) if key in order else len(order), key)

    sections = []
    task_order, metric_order = tuple(TASKS), tuple(METRICS)
    for task in sorted(grouped, key=lambda key: rank(task_order, key)):
        metrics = sorted(
            {metric for values in grouped[task].values() for metric in values}, key=lambda m: rank(metric_order, m)
        )
        rows = []
        for (source, target), values in sorted(
            grouped[task].items(),
            key=lambda item: (language_order.get(item[0][0], 99), language_order.get(item[0][1] or "", -1)),
        ):
            cells: list[tuple[str, str] | None] = []
            for metric in metrics:
                score = values.get(metric)
                if score is None:
                    cells.append(None)
                    continue
                interval = ""
                if score.get("ci_low") is not None and score.get("ci_high") is not None:
                    interval = f"[{format_metric(metric, score['ci_low'])}, {format_metric(metric, score['ci_high'])}]"
                cells.append((format_metric(metric, score["value"]), interval))
            rows.append((source, target, cells))
        sections.append(ScoreSection(task=task, metrics=metrics, rows=rows))
    return sections


def manifest_facts(manifest: dict) -> list[tuple[str, str]]:
    """The manifest entries a reader looks for first, as (label, text); missing ones are left out."""
    facts: list[tuple[str, str]] = []

    def get(*path: str):
        value: object = manifest
        for key in path:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return value

    dataset = get("dataset") or {}
    if isinstance(dataset, dict) and dataset.get("name"):
        text = f"{dataset.get('name')} {dataset.get('version', '')}".strip()
        if dataset.get("pool_size"):
            text += f", pool {dataset['pool_size']:,} per language"
        if dataset.get("content_hash"):
            text += f", sha256 {str(dataset['content_hash'])[:12]}…"
        facts.append(("Dataset", text))
    model = get("model") or {}
    if isinstance(model, dict):
        revision = model.get("resolved_revision") or model.get("revision")
        if revision:
            facts.append(("Model revision", str(revision)))
        prompts = model.get("prompts")
        if isinstance(prompts, dict):
            shown = "; ".join(f"{role}: {text!r}" for role, text in prompts.items() if text) or "none"
            facts.append(("Prompts", shown))
    for label, path in (("Code version", ("code_version",)), ("Engine", ("engine_version",)), ("Seed", ("seed",))):
        value = get(*path)
        if value not in (None, ""):
            facts.append((label, str(value)))
    hardware = get("hardware")
    if hardware:
        facts.append(
            (
                "Hardware",
                ", ".join(f"{k}: {v}" for k, v in hardware.items()) if isinstance(hardware, dict) else str(hardware),
            )
        )
    elif get("device"):
        facts.append(("Device", str(get("device"))))
    timings = get("timings")
    if isinstance(timings, dict) and timings:
        facts.append(
            (
                "Timings",
                ", ".join(
                    f"{stage} {seconds:.1f} s" for stage, seconds in timings.items() if isinstance(seconds, int | float)
                ),
            )
        )
    total, encoded, cached = get("texts_total"), get("texts_encoded"), get("texts_from_cache")
    if total is not None:
        facts.append(
            ("Texts", f"{total:,} unique; {encoded or 0:,} encoded in this execution, {cached or 0:,} from the cache")
        )
    return facts
