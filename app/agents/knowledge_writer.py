"""KnowledgeWriter: the `summary` model rewrites knowledgebase.md from the old file, the
memories' digest and the episode's result. A failed or empty answer gives None (the knowledge
base keeps its digest) and is counted in `failures`."""

from __future__ import annotations

import logging

from cairn.agents.data_fence import MEMORIES, as_data, with_data_rule
from cairn.agents.prompt_files import render
from cairn.errors import LLMError
from cairn.interfaces.knowledge import EPISODES_HEADER, IKnowledgeWriter
from cairn.interfaces.llm import ILLMClient, LLMMessage, LLMRequest

log = logging.getLogger(__name__)


class KnowledgeWriter(IKnowledgeWriter):
    """The model's rewrite of the strategic knowledge (prompt: `knowledge_update.md`)."""

    def __init__(self, client: ILLMClient) -> None:
        self._client = client
        self.failures = 0

    def rewrite(self, old: str, digest: str, episode: str) -> str | None:
        prompt = render(
            "knowledge_update",
            old=as_data(old, MEMORIES),
            digest=as_data(digest, MEMORIES),
            episode=episode,
        )
        try:
            answer = self._client.complete(
                LLMRequest(
                    role="summary",
                    system=with_data_rule(
                        "You maintain a text-adventure agent's strategic knowledge base."
                    ),
                    messages=[LLMMessage(role="user", content=prompt)],
                    max_tokens=1200,
                )
            )
        except LLMError as exc:
            self.failures += 1
            log.warning("knowledge base rewrite failed (%s); keeping the digest", exc)
            return None
        text = answer.text.split(EPISODES_HEADER, 1)[0].strip()
        if not text:
            self.failures += 1
            log.warning("knowledge base rewrite was empty; keeping the digest")
            return None
        return text
