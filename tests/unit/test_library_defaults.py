"""Defaults and traps a new user of the library meets: the default workdir is a named folder,
a receiver connected with cairn.events.events.connect keeps receiving (blinker alone holds a
weak reference and drops a lambda), signals are named cairn.* and document their arguments,
and no docstring sends users to design documents they do not have."""

from __future__ import annotations

import gc
import re
from pathlib import Path

from click.testing import CliRunner

from cairn.cli import main
from cairn.events import events
from cairn.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]


def test_the_default_workdir_is_a_named_folder_not_the_current_one(
    tmp_path: Path, monkeypatch: object
) -> None:
    assert load_settings().workdir == Path("cairn-runs")
    import os

    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(main, ["demo"])
    finally:
        os.chdir(here)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cairn-runs"]


def test_a_lambda_connected_through_connect_keeps_receiving() -> None:
    seen: list[object] = []
    receiver = events.connect(events.episode_ended, lambda sender, **kw: seen.append(kw))
    try:
        gc.collect()
        events.episode_ended.send(None, episode=1, won=True, died=False)
        assert seen == [{"episode": 1, "won": True, "died": False}]
    finally:
        events.episode_ended.disconnect(receiver)


def test_signals_are_named_cairn_and_list_their_keyword_arguments() -> None:
    signals = [v for v in vars(events).values() if isinstance(v, type(events.memory_recorded))]
    assert len(signals) >= 7
    for signal in signals:
        assert signal.name.startswith("cairn."), signal.name
    text = (ROOT / "app" / "events" / "events.py").read_text()
    for docstring in re.findall(r'signal\("cairn\.[a-z-]+"\)\n"""(.*?)"""', text, re.S):
        assert "Sent with `" in docstring or "Sent when" in docstring, docstring


def test_no_docstring_cites_design_documents_users_do_not_have() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "app").rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if re.search(r"\bseeds? ?-?00\d", line, re.I)
    ]
    assert offenders == []
