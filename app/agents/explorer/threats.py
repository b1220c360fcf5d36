"""Threats: a character here attacking the player. The offline player retreats the way it
came (the compass opposite of the move that brought it in), once per threat, rather than go
on trying the room's things while the attack goes on (a thug slashing at the player in the
street killed it two turns later, in both modes, while the way back was open)."""

from __future__ import annotations

import re

from cairn.agents.explorer.episode import Episode, Move
from cairn.agents.explorer.words import opposite
from cairn.interfaces.agent import AgentView

_ATTACK_AT_YOU = re.compile(
    r"\b(?:slash\w*|stab\w*|swing\w*|swipe\w*|lunge\w*|strik\w*|thrust\w*|charg\w*|"
    r"attack\w*|lash\w*|hack\w*|club\w*|punch\w*|fir(?:e|es|ing)|shoot\w*|bit(?:e|es|ing))"
    r"\b[^.!?\n]{0,40}?\b(?:at|toward|towards)?\s*you\b",
    re.IGNORECASE,
)
"""An attack aimed at the player, in progress ("begins slashing the knife at you")."""


def retreat(view: AgentView, episode: Episode) -> Move | None:
    """The way back out of a room where a character present attacks the player: the opposite
    of the move that brought the player in, unless it was just sent (it did not help); None
    when nobody here attacks, or no way back is known."""
    obs = view.observation
    here = obs.location_id
    if obs.died or not obs.npcs_present or here is None:
        return None
    if _ATTACK_AT_YOU.search(obs.text) is None:
        return None
    came = episode.came.get(here)
    back = opposite(came) if came else None
    if back is None or back == episode.sent:
        return None
    who = obs.npcs_present[0]
    return Move(back, f"Trying {back}: the {who} attacks me here; back the way I came.")
