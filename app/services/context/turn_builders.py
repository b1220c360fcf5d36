"""Builders that need no memory service: recent reasoning, recent actions, caller sections."""

from __future__ import annotations

from cairn.models.game import TurnOutcome
from cairn.services.context.builders import ContextRequest, Section, SectionBuilder, one_line
from cairn.services.context.tokens import estimate_tokens


def first_line(text: str) -> str:
    """The first line of `text` that is not blank, stripped ("" when none is)."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def turn_place(turn: TurnOutcome) -> str:
    """Where a turn was played, as a prompt names it: the room's name, else its id."""
    if turn.location_before_name:
        return one_line(turn.location_before_name)
    if turn.location_before is not None:
        return f"Location {turn.location_before}"
    return "unknown location"


class RecentReasoningBuilder(SectionBuilder):
    """The "Previous Reasoning and Actions" section: the last turns' reasoning, action, response.

    Reasoning and response are flattened to one line each; the response is clipped to
    ``max_response_chars``.
    """

    default_name = "recent_reasoning"
    default_title = "Previous Reasoning and Actions"
    default_priority = 20

    def __init__(
        self,
        *,
        turns: int = 3,
        max_response_chars: int = 200,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self.turns = turns
        self.max_response_chars = max_response_chars

    def build(self, request: ContextRequest) -> Section | None:
        if self.turns <= 0 or not request.recent_turns:
            return None
        blocks = [
            "\n".join(
                [
                    f"Turn {t.turn}:",
                    f"Reasoning: {one_line(t.reasoning) or '(none recorded)'}",
                    f"Action: {one_line(t.action)}",
                    f"Response: {one_line(t.response, self.max_response_chars)}",
                ]
            )
            for t in request.recent_turns[-self.turns :]
        ]
        return self.section("\n\n".join(blocks))


class RecentActionsBuilder(SectionBuilder):
    """The last K actions, one line each: ``T{turn} @ {room}: {action} -> {first line}``."""

    default_name = "recent_actions"
    default_title = "Recent Actions"
    default_priority = 30

    def __init__(
        self,
        *,
        last_k: int = 8,
        max_response_chars: int = 120,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self.last_k = last_k
        self.max_response_chars = max_response_chars

    def build(self, request: ContextRequest) -> Section | None:
        if self.last_k <= 0 or not request.recent_turns:
            return None
        lines = [
            f"T{t.turn} @ {turn_place(t)}: {one_line(t.action)} -> "
            f"{one_line(first_line(t.response), self.max_response_chars)}"
            for t in request.recent_turns[-self.last_k :]
        ]
        return self.section("\n".join(lines))


class ExtraSectionBuilder(SectionBuilder):
    """Renders ``request.extra_sections[name]`` (map, objectives, knowledge...) when given.

    With ``max_tokens`` set, a longer text keeps its leading lines and says how many it left out,
    so a whole knowledge base or map never lands in a prompt unbounded.
    """

    default_priority = 60

    def __init__(
        self,
        name: str,
        *,
        title: str | None = None,
        priority: int | None = None,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self.name = name
        if title is None:
            self.title = name.replace("_", " ").title()
        self.max_tokens = max_tokens

    def build(self, request: ContextRequest) -> Section | None:
        text = request.extra_sections.get(self.name, "").strip()
        if not text:
            return None
        if self.max_tokens is not None and estimate_tokens(text) > self.max_tokens:
            text = self._clip(text, self.max_tokens)
        return self.section(text)

    @staticmethod
    def _clip(text: str, max_tokens: int) -> str:
        lines = text.splitlines()

        def clipped(kept: int) -> str:
            return "\n".join([*lines[:kept], f"(+{len(lines) - kept} more lines not shown)"])

        low, high = 0, len(lines) - 1  # binary search: the most leading lines that fit
        while low < high:
            mid = (low + high + 1) // 2
            if estimate_tokens(clipped(mid)) <= max_tokens:
                low = mid
            else:
                high = mid - 1
        return clipped(low)
