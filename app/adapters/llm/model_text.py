"""The door where a model's text enters cairn: reasoning blocks are taken out of every answer.

Models think aloud in tags: `<thinking>` (Claude, when asked), `<think>` (Qwen3, DeepSeek-R1
and the other reasoning models Ollama serves), `<reasoning>`, `<reflection>` and their kin. What
cairn stores (memories, visit summaries, knowledgebase.md, objectives, notes) is the answer
only. `split_reasoning` is the one function that tells the two apart; `ReasoningDoor` applies it
to every answer of a client (its text, and every string of its tool calls' inputs), keeps what
it took out in `LLMResponse.reasoning`, and is what the container hands to every part that asks
a model (`model_text_door`). The exchange log and cassettes, inside the door, keep the answer as
the model gave it.
"""

from __future__ import annotations

import re
from typing import Any

from cairn.interfaces.llm import ILLMClient, LLMRequest, LLMResponse, ToolCall

REASONING_TAGS: tuple[str, ...] = (
    "think",
    "thinking",
    "thought",
    "thoughts",
    "reasoning",
    "reflection",
    "scratchpad",
    "inner_monologue",
)
"""The tag names taken for reasoning (any case; an opening tag may carry attributes)."""

_NAMES = "|".join(sorted(REASONING_TAGS, key=len, reverse=True))
_OPEN = re.compile(rf"<\s*({_NAMES})(?:\s[^<>]*)?>", re.IGNORECASE)
_CLOSE = re.compile(rf"<\s*/\s*({_NAMES})\s*>", re.IGNORECASE)
_TAG = re.compile(rf"<\s*(/?)\s*({_NAMES})(?:\s[^<>]*)?>", re.IGNORECASE)


def split_reasoning(text: str) -> tuple[str, str]:
    """Split a model's text into (reasoning, answer).

    - a tagged block (`<think>...</think>`, any tag of `REASONING_TAGS`, nested ones counted)
      is reasoning, wherever it stands;
    - an opening tag never closed makes the rest of the text reasoning (an answer cut off
      while the model was still thinking is no answer: `<think>` at the start leaves none);
    - a closing tag with no opening before it makes what precedes it reasoning (models whose
      chat template opens the block in the prompt answer `...</think>answer`);
    - a stray closing tag left in the answer is dropped.

    The answer keeps its own text; where a block stood, the text on either side is joined by
    a blank line (if a line break was there) or a space. A text with no such tag is returned
    unchanged, with "" as reasoning.
    """
    if "<" not in text or _TAG.search(text) is None:
        return "", text
    thoughts: list[str] = []
    pieces: list[str] = []
    pos = 0
    first_close = _CLOSE.search(text)
    first_open = _OPEN.search(text)
    if first_close is not None and (first_open is None or first_close.start() < first_open.start()):
        thoughts.append(text[: first_close.start()])
        pos = first_close.end()
    while True:
        opening = _OPEN.search(text, pos)
        if opening is None:
            pieces.append(text[pos:])
            break
        pieces.append(text[pos : opening.start()])
        end = _block_end(text, opening)
        if end is None:  # never closed: the rest is reasoning
            thoughts.append(text[opening.end() :])
            break
        inner_end, pos = end
        thoughts.append(text[opening.end() : inner_end])
    answer = _join([_CLOSE.sub("", piece) for piece in pieces])
    inner = (_TAG.sub("", thought).strip() for thought in thoughts)
    reasoning = "\n".join(part for part in inner if part)
    return reasoning, answer


def _block_end(text: str, opening: re.Match[str]) -> tuple[int, int] | None:
    """Where the block `opening` starts ends: (start, end) of its closing tag, the same tag's
    nested blocks counted; None when it is never closed."""
    name = opening.group(1).lower()
    depth = 1
    for tag in _TAG.finditer(text, opening.end()):
        if tag.group(2).lower() != name:
            continue
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            return tag.start(), tag.end()
    return None


def _join(pieces: list[str]) -> str:
    """The answer's pieces joined where blocks were cut out: a blank line where a line break
    stood at the cut, a space otherwise."""
    out = ""
    for piece in pieces:
        if not out:
            out = piece.lstrip()
            continue
        if not piece.strip():
            continue
        left, right = out.rstrip(), piece.lstrip()
        gap = out[len(left) :] + piece[: len(piece) - len(right)]
        out = left + ("\n\n" if "\n" in gap else " ") + right
    return out.strip()


def _clean(value: Any, thoughts: list[str]) -> Any:
    """`value` (a tool call's input) with reasoning taken out of every string in it."""
    if isinstance(value, str):
        reasoning, answer = split_reasoning(value)
        if reasoning:
            thoughts.append(reasoning)
        return answer
    if isinstance(value, dict):
        return {key: _clean(item, thoughts) for key, item in value.items()}
    if isinstance(value, list):
        return [_clean(item, thoughts) for item in value]
    return value


def without_reasoning(response: LLMResponse) -> LLMResponse:
    """`response` with its reasoning blocks taken out of its text and of every string of its
    tool calls' inputs, and kept apart in `reasoning`; the same object when it has none."""
    thoughts: list[str] = []
    text = _clean(response.text, thoughts)
    calls = [
        ToolCall(id=call.id, name=call.name, input=_clean(call.input, thoughts))
        for call in response.tool_calls
    ]
    if not thoughts and text == response.text:
        return response
    joined = "\n".join(t for t in (response.reasoning, *thoughts) if t)
    return response.model_copy(update={"text": text, "tool_calls": calls, "reasoning": joined})


class ReasoningDoor(ILLMClient):
    """A client whose answers come without reasoning blocks (`without_reasoning`); everything
    else is `inner`'s."""

    def __init__(self, inner: ILLMClient) -> None:
        self.inner = inner

    def complete(self, request: LLMRequest) -> LLMResponse:
        return without_reasoning(self.inner.complete(request))

    def report_unusable(self, request: LLMRequest) -> None:
        self.inner.report_unusable(request)

    def server(self) -> str:
        return self.inner.server()


def model_text_door(client: ILLMClient | None) -> ILLMClient | None:
    """`client` behind the reasoning door (None offline stays None)."""
    if client is None or isinstance(client, ReasoningDoor):
        return client
    return ReasoningDoor(client)
