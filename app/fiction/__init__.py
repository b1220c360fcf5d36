"""The interactive-fiction rules: what a turn of a parser game teaches (a move, a failure and
its ledger, a death and its cause, a win, the summarizer's memory), as typed memory changes
(`FictionRules`, an `ITurnInterpreter`). The memory engine (`cairn.services`) knows them only
through that port; the container gives them to it."""
