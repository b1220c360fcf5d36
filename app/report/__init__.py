"""The HTML report of a run: the map, the memories, the curves across episodes and LLM use.

Modules: `layout` (where rooms and edges go), `svg_map` (the map as SVG), `charts` (the
curves), `compare` (two runs side by side), `data` (what a workdir holds), `page` (the HTML),
`writer` (open a workdir's store and write the page).
"""

from cairn.report.data import RunData, gather, load_report_json
from cairn.report.page import render_page
from cairn.report.svg_map import MapMarks, map_svg

__all__ = ["MapMarks", "RunData", "gather", "load_report_json", "map_svg", "render_page"]
