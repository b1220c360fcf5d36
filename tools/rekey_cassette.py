"""Re-key a scenario's cassette after a prompt change: the same answers, the new requests.

A cassette answers a request by the hash of what was sent (model, system, messages, tools);
a prompt that changes its words changes every hash, and the replay misses. This replays the
scenario once with the cassette's recorded answers served in their recorded order (each
request must have the role of the recorded one it takes the place of), and rewrites the
cassette with each answer keyed by the request that now asks for it. The answers themselves
(usage and latency included) are kept byte for byte.

    .venv/bin/python tools/rekey_cassette.py scenarios/zork1_troll.yaml

The scenario must then pass as before (`cairn replay scenarios/zork1_troll.yaml`): a re-keyed
cassette is only right if the replay's expectations still hold.
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cairn.adapters.llm import cassette as cassette_module  # noqa: E402
from cairn.adapters.llm.exchange_log import canonical_json, request_hash, request_payload  # noqa: E402
from cairn.adapters.llm.requests import model_for_role  # noqa: E402
from cairn.interfaces.llm import LLMRequest, LLMResponse  # noqa: E402
from cairn.replay import load_scenario, run_scenario  # noqa: E402


def rekey(scenario: Path) -> Path:
    """Replay `scenario` with its cassette's answers in order; rewrite the cassette."""
    document = load_scenario(scenario)
    mode, _, name = str(document.scenario.llm).partition(":")
    if mode != "cassette":
        raise SystemExit(f"{scenario}: llm is {document.scenario.llm!r}, not cassette:PATH")
    path = (scenario.parent / name).resolve()
    old = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    new: list[str] = []
    lock = threading.Lock()

    def complete(self: Any, request: LLMRequest) -> LLMResponse:
        with lock:
            if len(new) >= len(old):
                raise SystemExit(f"request {len(new) + 1} has no recorded answer left")
            recorded = old[len(new)]
            if recorded["role"] != request.role:
                raise SystemExit(
                    f"request {len(new) + 1} is for role {request.role!r}; the recorded"
                    f" answer was for {recorded['role']!r}"
                )
            model = model_for_role(self.models, request.role)
            entry = {
                "request_hash": request_hash(request, model),
                "role": request.role,
                "model": model,
                "request": request_payload(request, model),
                "response": recorded["response"],
            }
            new.append(canonical_json(entry))
            return LLMResponse.model_validate(recorded["response"])

    cassette_module.CassetteClient.complete = complete  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as workdir:
        run_scenario(document, Path(workdir))
    if len(new) != len(old):
        raise SystemExit(f"the replay asked {len(new)} requests; the cassette holds {len(old)}")
    path.write_text("".join(f"{line}\n" for line in new), encoding="utf-8")
    return path


if __name__ == "__main__":
    for given in sys.argv[1:]:
        print(f"re-keyed {rekey(Path(given))}")
