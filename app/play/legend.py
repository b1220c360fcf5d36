"""The legend of the table `cairn play` prints (no imports: the CLI's help shows it)."""

TABLE_LEGEND = (
    "score: the episode's final score / the game's maximum; best: the highest it reached;"
    " coverage: visited rooms holding a memory; rep.fail: commands that failed again where they"
    " had failed before; retried: commands tried again where they had failed, whatever came of"
    " it; summ/turn: summarizer calls per turn; 1st score: turns to the first score; ctx p50:"
    " median tokens of a turn's whole model request (system prompt, tools and prompt; offline:"
    " the prompt); loc.mem max: most room-memory tokens in one prompt; stand-in (with a model):"
    " turns the offline player played because the model could not"
)
