"""Learning curves across episodes, drawn as small inline SVG line charts."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Any

WIDTH, HEIGHT = 380, 210
LEFT, RIGHT, TOP, BOTTOM = 48, 14, 38, 30


@dataclass(frozen=True)
class Curve:
    """One figure per episode, read from report.json's `episodes` entries."""

    key: str
    title: str
    value: Callable[[dict[str, Any]], float | None]
    show: Callable[[float], str]


def _number(key: str) -> Callable[[dict[str, Any]], float | None]:
    def read(episode: dict[str, Any]) -> float | None:
        value = episode.get(key)
        return float(value) if isinstance(value, int | float) else None

    return read


def _plain(value: float) -> str:
    return f"{value:.0f}" if value == int(value) else f"{value:.2f}"


CURVES: tuple[Curve, ...] = (
    Curve("score", "Score", _number("score"), _plain),
    Curve("turns_to_first_score", "Turns to first score", _number("turns_to_first_score"), _plain),
    Curve(
        "repeated_failed_action_rate",
        "Repeated-failure rate",
        _number("repeated_failed_action_rate"),
        lambda v: f"{v:.1%}",
    ),
    Curve(
        "summarizer_call_rate",
        "Summarizer calls per turn",
        _number("summarizer_call_rate"),
        lambda v: f"{v:.2f}",
    ),
    Curve(
        "context_tokens_p50",
        "Prompt tokens per turn (median)",
        _number("context_tokens_p50"),
        _plain,
    ),
)


@dataclass(frozen=True)
class Series:
    """One run's values on a curve (None: the episode has no such figure, e.g. never scored)."""

    name: str
    css: str
    values: list[float | None]


def curve_series(curve: Curve, report: dict[str, Any], name: str, css: str) -> Series:
    """A run's values of `curve`, one per episode of its report.json."""
    return Series(name, css, [curve.value(e) for e in report.get("episodes", [])])


def line_chart(curve: Curve, series: list[Series]) -> str:
    """One chart: a line and a point per episode for each series (a cross for a missing
    value), axes with the episode numbers and a few value ticks."""
    episodes = max((len(s.values) for s in series), default=0)
    values = [v for s in series for v in s.values if v is not None]
    top, intervals = _nice_top(max(values, default=0.0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x_at(episode: int) -> float:
        return LEFT + (plot_w / 2 if episodes <= 1 else plot_w * (episode - 1) / (episodes - 1))

    def y_at(value: float) -> float:
        return TOP + plot_h * (1 - value / top)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-metric="{curve.key}" '
        f'width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(curve.title)}">',
        f'<text class="chart-title" x="{LEFT}" y="16">{escape(curve.title)}</text>',
        f'<line class="axis" x1="{LEFT}" y1="{TOP + plot_h}" x2="{WIDTH - RIGHT}" '
        f'y2="{TOP + plot_h}"/>',
        f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}"/>',
    ]
    for i in range(intervals + 1):
        tick = top * i / intervals
        y = y_at(tick)
        out.append(
            f'<line class="grid" x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{LEFT - 5}" y="{y + 3:.1f}" text-anchor="end">'
            f"{escape(curve.show(tick))}</text>"
        )
    step = max(1, math.ceil(episodes / 10))
    for episode in range(1, episodes + 1, step):
        out.append(
            f'<text class="tick" x="{x_at(episode):.1f}" y="{HEIGHT - BOTTOM + 14}" '
            f'text-anchor="middle">{episode}</text>'
        )
    out.append(
        f'<text class="tick" x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 3}" '
        'text-anchor="middle">episode</text>'
    )
    for s in series:
        points = [(x_at(i), y_at(v)) for i, v in enumerate(s.values, start=1) if v is not None]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            out.append(f'<polyline class="line {s.css}" points="{path}"/>')
        for i, v in enumerate(s.values, start=1):
            label = f"{s.name}, episode {i}: " + ("none" if v is None else curve.show(v))
            if v is None:
                out.append(
                    f'<text class="point missing {s.css}" data-episode="{i}" x="{x_at(i):.1f}" '
                    f'y="{TOP + plot_h + 4:.1f}" text-anchor="middle">\u00d7'
                    f"<title>{escape(label)}</title></text>"
                )
            else:
                out.append(
                    f'<circle class="point {s.css}" data-episode="{i}" cx="{x_at(i):.1f}" '
                    f'cy="{y_at(v):.1f}" r="4"><title>{escape(label)}</title></circle>'
                )
    if len(series) > 1:  # the legend, on its own line under the title
        x = float(LEFT)
        for s in series:
            out.append(
                f'<g class="legend {s.css}"><line class="line {s.css}" x1="{x:.1f}" y1="26" '
                f'x2="{x + 14:.1f}" y2="26"/><text x="{x + 18:.1f}" y="30">'
                f"{escape(s.name)}</text></g>"
            )
            x += 6 * len(s.name) + 34
    out.append("</svg>")
    return "".join(out)


def _nice_top(value: float) -> tuple[float, int]:
    """The axis top, the smallest of 1, 2, 2.5, 5 x 10^k at or above `value` (1 when nothing
    is above 0), and how many intervals divide it into round steps."""
    if value <= 0:
        return 1.0, 5
    power = 10.0 ** math.floor(math.log10(value))
    for factor, intervals in ((1, 5), (2, 4), (2.5, 5), (5, 5), (10, 5)):
        if factor * power >= value * (1 - 1e-9):
            return factor * power, intervals
    return 10 * power, 5
