"""Template filters over leaderboard.wording: every page writes p-values, intervals and verdicts alike."""

from __future__ import annotations

from django import template

from leaderboard import wording

register = template.Library()


@register.filter
def p_value(value: float | None) -> str:
    """`{{ row.p_value|p_value }}`: '< 0.001', '0.03', '—'."""
    return wording.p_value_text(value)


@register.filter
def p_statement(value: float | None) -> str:
    """`{{ table.mcnemar_p|p_statement }}`: 'p < 0.001', 'p = 0.03'."""
    return wording.p_statement(value)


@register.simple_tag
def interval(low: float | None, high: float | None, digits: int = 3) -> str:
    """`{% interval row.kappa_ci_low row.kappa_ci_high %}`: '[-0.474, 0.760]'."""
    return wording.interval_text(low, high, digits)


@register.simple_tag
def verdict(value: str, model_a: str, model_b: str) -> str:
    """`{% verdict row.verdict row.model_a row.model_b %}`: 'E5-Large-Instruct is better'."""
    return wording.verdict_text(value, model_a, model_b)
