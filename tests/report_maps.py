"""Maps for the report's tests and bench: Zork I's full walkthrough map, built by replaying the
walkthrough through Jericho (story files from $CAIRN_ROMS, never copied)."""

from __future__ import annotations

import os
from pathlib import Path

from cairn.services.map import MapGraph

ROMS = Path(
    os.environ.get("CAIRN_ROMS") or Path(__file__).resolve().parents[1].parent / "shared" / "roms"
)
ZORK = ROMS / "zork1.z5"


def walkthrough_map(story: Path, workdir: Path) -> MapGraph:
    """The map a replay of `story`'s whole walkthrough learns (its workdir: `workdir`)."""
    from cairn.container import build_container
    from cairn.replay.runner import JerichoReplay, open_story, replay_settings, walkthrough_document
    from cairn.replay.scenario import JerichoScenario

    document = walkthrough_document(story)
    spec = document.scenario
    assert isinstance(spec, JerichoScenario)
    settings = replay_settings(document, workdir)
    container = build_container(settings)
    try:
        JerichoReplay(document, spec, container, open_story(document, spec, None)).run()
    finally:
        container.store().close()
    graph: MapGraph = container.map_graph()
    return graph
