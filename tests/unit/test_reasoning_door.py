"""`split_reasoning` and the door (`ReasoningDoor`): a model's reasoning blocks are taken out of
its answers, once, where model text enters cairn (issue 38, item 6)."""

from __future__ import annotations

import pytest

from cairn.adapters.llm.model_text import (
    REASONING_TAGS,
    ReasoningDoor,
    model_text_door,
    split_reasoning,
    without_reasoning,
)
from cairn.interfaces.llm import ILLMClient, LLMRequest, LLMResponse, ToolCall, Usage


@pytest.mark.parametrize(
    ("text", "reasoning", "answer"),
    [
        ("just text", "", "just text"),
        ("a < b and c > d", "", "a < b and c > d"),
        ("<b>bold</b> stays", "", "<b>bold</b> stays"),
        (
            "<thinking>The window is ajar.</thinking> open window <reflection>worked</reflection>",
            "The window is ajar.\nworked",
            "open window",
        ),
        ("<think>\nplan\n</think>\n\n# Strategy\n- go", "plan", "# Strategy\n- go"),
        ("<THINKING>loud</THINKING>quiet", "loud", "quiet"),
        ('<think type="internal">x</think>answer', "x", "answer"),
        ("< think >x</ think >answer", "x", "answer"),
        ("<reasoning>r</reasoning>A.\n<thought>t</thought>\nB.", "r\nt", "A.\n\nB."),
        ("<scratchpad>s</scratchpad>ok <inner_monologue>m</inner_monologue>", "s\nm", "ok"),
        # an unclosed opening tag: the rest is reasoning; at the start, no answer at all
        ("<think>unclosed thought", "unclosed thought", ""),
        ("Go north. <thinking>but wait", "but wait", "Go north."),
        # a closing tag with no opening before it: what precedes it is reasoning
        ("reasoning first</think>the answer", "reasoning first", "the answer"),
        # nested blocks of one tag are one block; a stray closing tag is dropped
        ("<think>a <think>b</think> c</think>done", "a b c", "done"),
        ("done</thinking> here</thinking>", "done", "here"),
        # a block between words leaves one space
        ("The door <think>is it?</think> is locked.", "is it?", "The door is locked."),
    ],
)
def test_split_reasoning(text: str, reasoning: str, answer: str) -> None:
    assert split_reasoning(text) == (reasoning, answer)


def test_every_kin_tag_is_taken() -> None:
    for tag in REASONING_TAGS:
        assert split_reasoning(f"<{tag}>why</{tag}>what") == ("why", "what"), tag


def response(text: str = "", calls: list[ToolCall] | None = None) -> LLMResponse:
    return LLMResponse(
        text=text,
        tool_calls=calls or [],
        stop_reason="end_turn",
        usage=Usage(input_tokens=1, output_tokens=1),
        latency_ms=1.0,
        model="m",
    )


def test_tool_inputs_are_cleaned_at_every_depth_and_the_thoughts_kept() -> None:
    call = ToolCall(
        id="t1",
        name="SynthesisDecision",
        input={
            "memory_text": "<thinking>maybe</thinking>The key opens the door.",
            "tags": ["<think>x</think>door", "plain"],
            "nested": {"note": "<reflection>y</reflection>z"},
            "importance": 800,
            "should_remember": True,
        },
    )
    cleaned = without_reasoning(response("<think>first</think>Sure.", [call]))
    assert cleaned.text == "Sure."
    assert cleaned.tool_calls[0].input == {
        "memory_text": "The key opens the door.",
        "tags": ["door", "plain"],
        "nested": {"note": "z"},
        "importance": 800,
        "should_remember": True,
    }
    assert cleaned.reasoning == "first\nmaybe\nx\ny"
    assert cleaned.tool_calls[0].id == "t1" and cleaned.usage == call_usage()


def call_usage() -> Usage:
    return Usage(input_tokens=1, output_tokens=1)


def test_an_answer_without_tags_is_the_same_object_and_dumps_as_before() -> None:
    plain = response("fine", [ToolCall(id="t", name="n", input={"a": "b"})])
    assert without_reasoning(plain) is plain
    assert "reasoning" not in plain.model_dump(mode="json")  # logs, cassettes unchanged
    assert without_reasoning(response("<think>t</think>ok")).model_dump()["reasoning"] == "t"


class Scripted(ILLMClient):
    def __init__(self, answer: LLMResponse) -> None:
        self.answer = answer
        self.unusable: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        return self.answer

    def report_unusable(self, request: LLMRequest) -> None:
        self.unusable.append(request)

    def server(self) -> str:
        return "a scripted server"


def test_the_door_cleans_answers_and_passes_the_rest_on() -> None:
    inner = Scripted(response("<think>t</think>answer"))
    door = model_text_door(inner)
    assert isinstance(door, ReasoningDoor) and model_text_door(door) is door
    assert model_text_door(None) is None
    request = LLMRequest(role="summary", system="s", messages=[])
    assert door.complete(request).text == "answer"
    door.report_unusable(request)
    assert inner.unusable == [request] and door.server() == "a scripted server"
