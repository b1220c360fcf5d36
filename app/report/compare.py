"""The per-episode comparison of two runs (e.g. memory against `--no-memory`)."""

from __future__ import annotations

from typing import Any

from cairn.report.charts import CURVES, Curve


def run_name(report: dict[str, Any]) -> str:
    """`memory` or `no memory`, as the run's report.json says."""
    return "memory" if report.get("memory", True) else "no memory"


def comparison_rows(a: dict[str, Any], b: dict[str, Any]) -> list[list[str]]:
    """A header row, then one row per episode: each curve's figure for run A, then run B
    ("-" where a run has no such episode or figure)."""
    head = ["ep"]
    for curve in CURVES:
        head += [f"{_short(curve)} A", f"{_short(curve)} B"]
    rows = [head]
    first, second = a.get("episodes", []), b.get("episodes", [])
    for index in range(max(len(first), len(second))):
        row = [str(index + 1)]
        for curve in CURVES:
            for episodes in (first, second):
                value = curve.value(episodes[index]) if index < len(episodes) else None
                row.append("-" if value is None else curve.show(value))
        rows.append(row)
    return rows


def render_comparison(a: dict[str, Any], b: dict[str, Any], name_a: str, name_b: str) -> str:
    """The comparison as an aligned text table, with a line naming runs A and B."""
    rows = comparison_rows(a, b)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        f"A: {name_a} ({a.get('game', '?')}, {run_name(a)}, llm {a.get('llm', '?')})",
        f"B: {name_b} ({b.get('game', '?')}, {run_name(b)}, llm {b.get('llm', '?')})",
    ]
    lines += ["  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)


_SHORT = {
    "score": "score",
    "turns_to_first_score": "1st score",
    "repeated_failed_action_rate": "rep.fail",
    "summarizer_call_rate": "summ/turn",
    "context_tokens_p50": "tokens/turn",
}


def _short(curve: Curve) -> str:
    return _SHORT.get(curve.key, curve.key)
