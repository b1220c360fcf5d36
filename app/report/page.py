"""The report as one self-contained HTML page: inline CSS, SVG and script, nothing fetched."""

from __future__ import annotations

from collections import defaultdict
from html import escape
from typing import Any

from cairn.compact_json import compact_json
from cairn.models.memory import MemoryEntry, MemoryScope
from cairn.report.charts import CURVES, curve_series, line_chart
from cairn.report.compare import comparison_rows, run_name
from cairn.report.cost import cost_table
from cairn.report.data import RunData
from cairn.report.svg_map import map_svg

STYLE = """
* { box-sizing: border-box; }
body { font-family: system-ui, sans-serif; margin: 0; color: #1d1d1b; background: #f4f3ee; }
header { padding: 14px 22px 8px; background: #23313f; color: #f4f3ee; }
header h1 { margin: 0 0 4px; font-size: 20px; }
header p { margin: 0; font-size: 13px; opacity: .9; }
main { display: grid; grid-template-columns: minmax(0, 1fr) 430px; gap: 14px; padding: 14px;
  align-items: start; }
.left { display: flex; flex-direction: column; gap: 14px; min-width: 0; }
section.panel { background: #fff; border: 1px solid #d8d6cc; border-radius: 8px;
  padding: 10px 12px; }
h2 { font-size: 15px; margin: 0 0 8px; }
.map-tools { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; font-size: 12px;
  margin-bottom: 6px; }
.map-tools button { font-size: 12px; }
.map-wrap { overflow: auto; max-height: 78vh; border: 1px solid #e4e2d8; }
.key { display: inline-flex; align-items: center; gap: 4px; }
.swatch { display: inline-block; width: 14px; height: 10px; border: 1px solid #456; }
#memories { max-height: calc(100vh - 28px); overflow: auto; position: sticky; top: 14px; }
.controls { display: flex; flex-direction: column; gap: 6px; position: sticky; top: -10px;
  background: #fff; padding: 4px 0 8px; z-index: 1; }
.controls input[type=search] { width: 100%; padding: 5px 7px; font-size: 13px; }
.controls .older { color: #666; font-size: 12px; }
.selection { font-size: 12px; display: flex; gap: 8px; align-items: center; }
.group h3 { font-size: 13px; margin: 10px 0 4px; border-bottom: 1px solid #e4e2d8; }
.group ul { list-style: none; margin: 0; padding: 0; }
.memory { font-size: 12px; padding: 4px 2px; border-bottom: 1px dotted #e4e2d8; }
.memory .cat { font-size: 10px; font-weight: 600; padding: 0 4px; border-radius: 3px;
  background: #e7eef6; }
.memory.cat-DANGER .cat { background: #fbe3e3; color: #a11; }
.memory.cat-SUCCESS .cat { background: #e3f4e3; color: #1b5e20; }
.memory.cat-FAILURE .cat { background: #f6eddc; color: #7a4b00; }
.memory .status { font-size: 10px; color: #666; }
.memory .title { font-weight: 600; }
.memory .meta { color: #777; font-size: 11px; }
.memory .text { color: #333; margin-top: 2px; white-space: pre-wrap; }
.memory.superseded { opacity: .65; }
.memory.superseded .title { text-decoration: line-through; }
.memory.flash { background: #fff3b0; }
.successor { font-size: 11px; color: #555; }
.empty { font-size: 12px; color: #777; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
.chart { background: #fff; }
.chart .chart-title { font-size: 12px; font-weight: 600; fill: #222; }
.chart .axis { stroke: #888; }
.chart .grid { stroke: #eee; }
.chart .tick { font-size: 10px; fill: #666; }
.chart .line { fill: none; stroke-width: 2; }
.chart .line.run { stroke: #1f6fb2; }
.chart .line.baseline { stroke: #c06000; stroke-dasharray: 5 3; }
.chart circle.run { fill: #1f6fb2; }
.chart circle.baseline { fill: #fff; stroke: #c06000; stroke-width: 2; }
.chart .missing { font-size: 13px; fill: #999; }
.chart .legend text { font-size: 10px; fill: #333; }
table { border-collapse: collapse; font-size: 12px; margin: 4px 16px 10px 0; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.tables { display: flex; flex-wrap: wrap; align-items: flex-start; }
"""

SCRIPT = """
(function () {
  var body = document.body;
  var filter = document.getElementById('filter');
  var superseded = document.getElementById('show-superseded');
  var selection = document.getElementById('selection-label');
  var empty = document.getElementById('no-memories');
  var groups = Array.prototype.slice.call(document.querySelectorAll('#memories .group'));
  var items = Array.prototype.slice.call(document.querySelectorAll('#memories .memory'));
  var rooms = Array.prototype.slice.call(document.querySelectorAll('#map-svg .room'));
  var selected = null;
  var later = document.getElementById('superseded-memories');
  function node(tag, cls, text) {
    var made = document.createElement(tag);
    if (cls) { made.className = cls; }
    if (text !== undefined) { made.textContent = text; }
    return made;
  }
  function linkToSuccessor(a) {
    a.addEventListener('click', function (e) {
      e.preventDefault();
      var target = document.getElementById(a.dataset.target);
      if (!target) { return; }
      if (target.classList.contains('superseded')) { superseded.checked = true; }
      filter.value = '';
      select(null);
      target.scrollIntoView({block: 'center'});
      target.classList.add('flash');
      setTimeout(function () { target.classList.remove('flash'); }, 1500);
    });
  }
  // superseded memories come as data, made into items (text only) when first asked for,
  // at the top of their group: a long run's page opens with its visible memories only
  function showLater() {
    if (later === null) { return; }
    var rows = JSON.parse(later.textContent);
    later = null;
    var made = {};
    rows.forEach(function (m) {
      var li = node('li', 'memory cat-' + m[2] + ' st-' + m[3] + ' superseded');
      li.id = 'mem-' + m[1];
      li.appendChild(node('span', 'cat', m[2]));
      li.appendChild(document.createTextNode(' '));
      li.appendChild(node('span', 'status', m[3]));
      li.appendChild(document.createTextNode(' '));
      li.appendChild(node('span', 'title', m[4]));
      li.appendChild(document.createTextNode(' '));
      li.appendChild(node('span', 'meta', m[5]));
      li.appendChild(node('div', 'text', m[6]));
      var after = node('div', 'successor');
      if (m[7] === null) {
        after.textContent = 'superseded, with no successor';
      } else {
        after.appendChild(document.createTextNode('superseded by '));
        var a = node('a', 'to-successor', m[8]);
        a.href = '#mem-' + m[7];
        a.dataset.target = 'mem-' + m[7];
        linkToSuccessor(a);
        after.appendChild(a);
      }
      li.appendChild(after);
      (made[m[0]] = made[m[0]] || document.createDocumentFragment()).appendChild(li);
      items.push(li);
    });
    Object.keys(made).forEach(function (key) {
      var group = document.getElementById('group-' + key);
      if (group) {
        var list = group.querySelector('ul');
        list.insertBefore(made[key], list.firstChild);
      }
    });
  }
  function apply() {
    if (superseded.checked) { showLater(); }
    var query = filter.value.trim().toLowerCase();
    body.classList.toggle('show-superseded', superseded.checked);
    items.forEach(function (li) {
      var hide = li.classList.contains('superseded') && !superseded.checked;
      li.hidden = hide || (query !== '' && li.textContent.toLowerCase().indexOf(query) < 0);
    });
    var shown = 0;
    groups.forEach(function (group) {
      var inRoom = selected === null || group.dataset.loc === selected;
      var any = group.querySelector('.memory:not([hidden])') !== null;
      group.hidden = !inRoom || !any;
      if (!group.hidden) { shown += 1; }
    });
    empty.hidden = shown > 0;
  }
  function select(room) {
    selected = room;
    rooms.forEach(function (g) { g.classList.toggle('selected', g.dataset.id === room); });
    var node = room === null ? null
      : document.querySelector('#map-svg .room[data-id="' + room + '"]');
    selection.textContent = node ? node.dataset.label : 'all rooms, NPCs and the world';
    apply();
    document.getElementById('memories').scrollTop = 0;
  }
  rooms.forEach(function (g) {
    g.addEventListener('click', function () { select(g.dataset.id); });
    g.addEventListener('keydown', function (e) {
      if (e.key === 'Enter') { select(g.dataset.id); }
    });
  });
  document.getElementById('show-all').addEventListener('click', function () { select(null); });
  filter.addEventListener('input', apply);
  superseded.addEventListener('change', apply);
  document.querySelectorAll('a.to-successor').forEach(linkToSuccessor);
  var svg = document.getElementById('map-svg');
  var baseW = parseFloat(svg.getAttribute('width'));
  var baseH = parseFloat(svg.getAttribute('height'));
  var scale = 1;
  function zoom(to) {
    scale = Math.max(0.2, Math.min(3, to));
    svg.setAttribute('width', String(baseW * scale));
    svg.setAttribute('height', String(baseH * scale));
  }
  document.querySelectorAll('[data-zoom]').forEach(function (button) {
    button.addEventListener('click', function () {
      var how = button.dataset.zoom;
      if (how === 'in') { zoom(scale * 1.25); }
      else if (how === 'out') { zoom(scale / 1.25); }
      else { zoom(svg.parentNode.clientWidth / baseW); }
    });
  });
  var room = svg.parentNode;
  if (baseW > room.clientWidth) { zoom(Math.max(0.5, room.clientWidth / baseW)); }
  apply();
})();
"""


def render_page(data: RunData) -> str:
    """The whole report page for one run (and its baseline, when given)."""
    report = data.report
    marks = data.marks
    svg = map_svg(data.graph, marks)
    visible = sum(1 for m in data.memories if m.visible)
    title = f"cairn report: {report.get('game', '?')}"
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{escape(title)}</title>",
            f"<style>{STYLE}</style></head><body>",
            f"<header><h1>{escape(title)}</h1><p>{escape(_summary(report))}; "
            f"{visible} memories shown"
            f" ({len(data.memories) - visible + data.older_archived} superseded)</p></header>",
            '<main><div class="left">',
            _map_panel(svg, len(data.graph.location_ids()), marks.start, marks.current, data),
            _curves_panel(data),
            _llm_panel(report),
            "</div>",
            _memory_panel(data),
            "</main>",
            f"<script>{SCRIPT}</script>",
            "</body></html>",
        ]
    )


def _summary(report: dict[str, Any]) -> str:
    total = report.get("total", {})
    best, most = total.get("best_score"), total.get("max_score")
    score = "?" if best is None else f"{best}" + (f"/{most}" if most is not None else "")
    return (
        f"{run_name(report)}, llm {report.get('llm', '?')}, store {report.get('store', '?')}, "
        f"seed {report.get('seed', '?')}, run {report.get('run_id', '?')}; "
        f"{len(report.get('episodes', []))} episodes, {total.get('turns', '?')} turns, "
        f"best score {score}, {total.get('locations_visited', '?')} rooms visited"
        + (" (interrupted)" if report.get("interrupted") else "")
        + _model_part(report)
    )


def _model_part(report: dict[str, Any]) -> str:
    """What the model did not do: turns the offline stand-in played, and the run's failure for
    its model (issue 38, item 10), as the play table and report.json say them."""
    stand_in = report.get("total", {}).get("stand_in_turns") or 0
    part = f"; {stand_in} turns played by the offline stand-in" if stand_in else ""
    failure = report.get("model_failure")
    return part + (f"; the run failed: {failure}" if failure else "")


def _room_name(data: RunData, room: int) -> str:
    return data.marks.label(data.graph, room)


def _map_panel(svg: str, rooms: int, start: int | None, current: int | None, data: RunData) -> str:
    def at(room: int | None) -> str:
        return "unknown" if room is None else escape(_room_name(data, room))

    return (
        '<section class="panel" id="map-panel"><h2>Map</h2>'
        '<div class="map-tools">'
        '<button type="button" data-zoom="out">-</button>'
        '<button type="button" data-zoom="in">+</button>'
        '<button type="button" data-zoom="fit">fit</button>'
        f"<span>{rooms} rooms; start {at(start)}; now {at(current)}. Click a room for its "
        "memories.</span>"
        '<span class="key"><span class="swatch" style="background:#fff"></span>'
        '<span class="swatch" style="background:#6aa5dc"></span>memories</span>'
        '<span class="key"><span class="swatch" style="border:3px solid #c62828"></span>'
        'danger</span><span class="key">\u2620 died here</span>'
        '<span class="key">- - one way, \u2014 both ways</span>'
        '<span class="key">? unexplored exit</span></div>'
        f'<div class="map-wrap">{svg}</div></section>'
    )


def _memory_panel(data: RunData) -> str:
    by_id = {m.id: m for m in data.memories}
    rooms: dict[int, list[MemoryEntry]] = defaultdict(list)
    npcs: dict[str, list[MemoryEntry]] = defaultdict(list)
    world: list[MemoryEntry] = []
    for entry in data.memories:
        if entry.scope is MemoryScope.LOCATION and entry.location_id is not None:
            rooms[entry.location_id].append(entry)
        elif entry.scope is MemoryScope.NPC:
            npcs[entry.npc_ids[0]].append(entry)
        else:
            world.append(entry)
    later: list[list[str | None]] = []
    groups = [
        _group(f"loc-{room}", _room_name(data, room), rooms[room], by_id, later, loc=room)
        for room in sorted(rooms)
    ]
    groups += [_group(f"npc-{npc}", f"NPC {npc}", npcs[npc], by_id, later) for npc in sorted(npcs)]
    if world:
        groups.append(_group("world", "World", world, by_id, later))
    return (
        '<section class="panel" id="memories"><h2>Memories</h2><div class="controls">'
        '<input type="search" id="filter" placeholder="Filter memories (title, text, category)">'
        f'<label><input type="checkbox" id="show-superseded"> show superseded ({len(later)})'
        "</label>"
        + (
            f'<span class="older">{data.older_archived} older superseded memories are in the'
            " archive: <code>cairn memories show --all</code></span>"
            if data.older_archived
            else ""
        )
        + '<div class="selection">Showing: <b id="selection-label">all rooms, NPCs and the world'
        '</b><button type="button" id="show-all">show all</button></div></div>'
        '<p class="empty" id="no-memories" hidden>No memories here.</p>'
        + "".join(groups)
        + _superseded_data(later)
        + "</section>"
    )


def _group(
    key: str,
    heading: str,
    entries: list[MemoryEntry],
    by_id: dict[str, MemoryEntry],
    later: list[list[str | None]],
    loc: int | None = None,
) -> str:
    """A group's visible memories as items; its superseded ones go to `later` (see
    `_superseded_data`)."""
    data_loc = f' data-loc="{loc}"' if loc is not None else ""
    shown = []
    for entry in entries:
        if entry.visible:
            shown.append(_memory(entry))
        else:
            later.append(_superseded_row(key, entry, by_id))
    return (
        f'<section class="group" id="group-{escape(key, quote=True)}"{data_loc}>'
        f"<h3>{escape(heading)} <small>({len(shown)})</small></h3><ul>"
        + "".join(shown)
        + "</ul></section>"
    )


def _memory(entry: MemoryEntry) -> str:
    status = entry.status.value
    meta = " ".join(entry.meta)
    return (
        f'<li class="memory cat-{entry.category.value} st-{status}" '
        f'id="mem-{escape(entry.id, quote=True)}">'
        f'<span class="cat">{entry.category.value}</span> <span class="status">{status}</span> '
        f'<span class="title">{escape(entry.title)}</span> <span class="meta">{escape(meta)}</span>'
        f'<div class="text">{escape(entry.text)}</div></li>'
    )


def _superseded_row(
    key: str, entry: MemoryEntry, by_id: dict[str, MemoryEntry]
) -> list[str | None]:
    """A superseded memory as the page's script makes it into an item: its group, id,
    category, status, title, meta, text and its successor's id and title (None: none)."""
    successor = by_id.get(entry.superseded_by or "")
    return [
        key,
        entry.id,
        entry.category.value,
        entry.status.value,
        entry.title,
        " ".join(entry.meta),
        entry.text,
        successor.id if successor is not None else None,
        successor.title if successor is not None else None,
    ]


def _superseded_data(rows: list[list[str | None]]) -> str:
    """The superseded memories as JSON the script reads when they are first shown (thousands
    at the end of a long run: the page is smaller and opens with the visible ones alone). No
    `<` stays in it, so nothing in a memory can close the script element."""
    text = compact_json(rows).decode()
    return (
        '<script type="application/json" id="superseded-memories">'
        + text.replace("<", "\\u003c")
        + "</script>"
    )


def _curves_panel(data: RunData) -> str:
    charts = []
    for curve in CURVES:
        series = [curve_series(curve, data.report, run_name(data.report), "run")]
        if data.baseline is not None:
            name = run_name(data.baseline)
            if name == series[0].name:
                name = "baseline"
            series.append(curve_series(curve, data.baseline, name, "baseline"))
        charts.append(line_chart(curve, series))
    table = ""
    if data.baseline is not None:
        rows = comparison_rows(data.report, data.baseline)
        table = "<h2>Per episode: A = this run, B = the baseline</h2>" + _table(
            rows[0], rows[1:], "comparison"
        )
    return (
        '<section class="panel" id="curves"><h2>Across episodes</h2>'
        f'<div class="charts">{"".join(charts)}</div>{table}</section>'
    )


def _llm_panel(report: dict[str, Any]) -> str:
    usage = report.get("llm_usage") or {}
    totals = [
        [str(usage.get(key, 0)) for key in ("calls", "failures", "input_tokens", "output_tokens")]
    ]
    roles = [
        [
            role,
            *(str(t.get(k, 0)) for k in ("calls", "failures", "input_tokens", "output_tokens")),
        ]
        for role, t in (usage.get("by_role") or {}).items()
    ]
    kinds = [[kind, str(n)] for kind, n in (usage.get("failures_by_kind") or {}).items()]
    note = (
        ""
        if usage.get("calls")
        else f'<p class="empty">No model calls (llm {escape(str(report.get("llm", "?")))}).</p>'
    )
    circuit = usage.get("circuit")
    circuit_line = (
        f"<p>Circuit breaker: {escape(str(circuit.get('state', '?')))}</p>"
        if isinstance(circuit, dict)
        else ""
    )
    return (
        '<section class="panel" id="llm"><h2>LLM use</h2>'
        + note
        + '<div class="tables">'
        + _table(["calls", "failures", "tokens in", "tokens out"], totals, "llm-totals")
        + _table(["role", "calls", "failures", "tokens in", "tokens out"], roles, "llm-roles")
        + _table(["failure kind", "count"], kinds, "llm-failures")
        + _table(
            ["summary failures", "query tool failures"],
            [[str(report.get("summary_failures", 0)), str(report.get("query_tool_failures", 0))]],
            "other-failures",
        )
        + f"</div>{cost_table(report)}{circuit_line}</section>"
    )


def _table(head: list[str], rows: list[list[str]], css_id: str) -> str:
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    if not rows:
        body = f'<tr><td colspan="{len(head)}">none</td></tr>'
    return f'<table id="{css_id}"><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>'
