"""The report's cost table: tokens (prompt-cache reads and writes apart) and dollars, in total,
per role and per episode, from report.json's `llm_usage.cost` and its episodes."""

from __future__ import annotations

import math
from html import escape
from typing import Any

HEAD = ["", "tokens in", "cache read", "cache write", "tokens out", "cost"]
UNKNOWN = "unknown"


def dollars(value: object) -> str:
    """`$0.0123`, or "unknown" when there is no price (a model missing from the table) or
    the figure is not finite (an older report.json's Infinity)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return f"${value:,.4f}"
    return UNKNOWN


def cost_rows(report: dict[str, Any]) -> list[list[str]]:
    """One row for the run, one per role, one per episode; none for a run without model calls
    (offline) or a report from before costs were counted (no `llm_usage.cost`)."""
    usage = report.get("llm_usage") or {}
    cost = usage.get("cost")
    if not isinstance(cost, dict) or not usage.get("calls"):
        return []
    rows = [_row("total", cost)]
    rows += [_row(role, part) for role, part in (cost.get("by_role") or {}).items()]
    for episode in report.get("episodes") or []:
        if isinstance(episode, dict) and "tokens" in episode:
            rows.append(_row(f"episode {episode.get('episode', '?')}", episode))
    return rows


def cost_table(report: dict[str, Any]) -> str:
    """The table as HTML (empty for a report without costs), with a note naming the models
    that had no price."""
    rows = cost_rows(report)
    if not rows:
        return ""
    cost = (report.get("llm_usage") or {}).get("cost", {})
    unpriced = cost.get("unpriced_models") or []
    note = (
        f'<p class="empty">No price for {escape(", ".join(map(str, unpriced)))}: cost unknown '
        "(set llm_prices).</p>"
        if unpriced
        else ""
    )
    if cost.get("cost_overflow"):
        note += '<p class="empty">A call\'s cost was too large to count: cost unknown.</p>'
    header = "".join(f"<th>{escape(h)}</th>" for h in HEAD)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return (
        f'<div class="cost"><table id="llm-cost"><thead><tr>{header}</tr></thead>'
        f"<tbody>{body}</tbody></table>{note}</div>"
    )


def _row(name: str, part: dict[str, Any]) -> list[str]:
    tokens = part.get("tokens") or {}
    counts = [str(tokens.get(k, 0)) for k in ("input", "cache_read", "cache_write", "output")]
    return [name, *counts, dollars(part.get("cost_usd"))]
