"""The game's words, read by phrasing classes: its reply, quoted speech, refusals, banners, stock
replies.

These are the words half of an outcome (`outcomes.verdict` reads the state first). Every rule is a
class of phrasing that many games share, never one game's sentence:

- The reply is the first paragraph of the answer, with quoted speech taken out: what a character
  says ("I can't help you," she says) and what the game prints from a thing that is read
  ('Under normal circumstances there is no danger...') are not the game refusing the command.
- A refusal is a phrase of the refusal class anywhere in the reply ("You can't go that way.",
  "The grating is locked.") or a polite one saying there is no need to act ("There's no need to
  do that.", "That's not necessary.").
- An absence ("You can't see any leaflet here!", "There is no tree here suitable for climbing.")
  refuses only as the reply's first sentence and only when that sentence stops there: "There is
  no door here, and all the windows are boarded up." and "... can't see any exit, though a
  window ..." describe a place.
- Too much carried ("Your load is too heavy.", "You're carrying too many things already.",
  "Your hands are full.") refuses a take for what the player holds, not for the thing or the
  place: dropping something makes it work.
- "Already" in the first sentence ("You already have that!", "It is already open.") says the
  command had nothing left to do: a no-op, not a refusal by the place.
- Banners (copyright, trademark, release / serial number / revision lines, compiler and
  interpreter lines, "type HELP" hints, web addresses) and stock replies ("Taken.", "Time
  passes.", "OK.") are never worth remembering.
"""

from __future__ import annotations

import re

_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_SPEECH = re.compile(
    r"\"[^\"]*\"|\u201c[^\u201d]*(?:\u201d|$)|(?<![\w'])'(?=[A-Za-z])[^'\n]*(?:\n[^'\n]+)*[.!?,]'(?!\w)"
)
"""Quoted words: double quotes, curly double quotes, and single-quoted text that ends a sentence
inside its quotes ('Thank you for ... toaster.'), so an apostrophe ("don't") opens nothing."""
_ASIDE = re.compile(r"^\s*[(\[][^()\[\]]*[)\]]\s*$")
"""A line that is only a parenthesised aside: "(first taking the key)", "[Taken]"."""

REFUSAL = re.compile(
    r"\b(?:you can'?t|you cannot|can not|i don'?t (?:understand|know)|doesn'?t (?:fit|work|seem)|"
    r"won'?t (?:budge|open|move|work)|(?:is|are) locked|nothing happens|not possible|"
    r"isn'?t possible|that'?s not|isn'?t (?:open|something you)|"
    r"you are empty-handed|too heavy|no verb|not something you can|beyond your reach|futile|"
    r"(?:has|have) no effect|you fail|you have to|fixed in place|you'?ll have to|"
    r"securely (?:anchored|fixed|attached|fastened)|(?:hardly|not) portable|"
    r"cannot be|can'?t be|you'?re not able|you are(?:n'?t| not) able|unable to|"
    r"you'?re not carrying|you (?:don'?t|do not) have|you(?:'ll)? need)\b|\bfirst\.$",
    re.IGNORECASE,
)
"""Refusals anywhere in the reply: the parser or the place said no."""
NO_NEED = re.compile(
    r"\b(?:(?:there'?s|there is) no (?:need|point|reason) to|you (?:don'?t|do not) need to|"
    r"no need to|needn'?t|(?:isn'?t|is not|'s not|not) (?:really |strictly )?"
    r"(?:necessary|needed|required)|unnecessary|pointless|"
    r"(?:would|will)(?:n'?t| not) (?:help|do any good|achieve anything|accomplish anything)|"
    r"(?:achieve|accomplish)(?:s|es|ed)? (?:nothing|little|very little)|"
    r"much (?:is|would be) (?:to be )?achieved|nothing practical)\b",
    re.IGNORECASE,
)
"""A polite refusal: there is no need to act. A no-op the game declined, never a success."""
ABSENCE = re.compile(
    r"\b(?:you (?:can'?t|cannot|don'?t|do not) see (?:any|no|that|the|such|it|them)|"
    r"(?:there is|there'?s|there are) no(?:thing|body|one|-one)?\b|"
    r"(?:is|are)(?:n'?t| not) here|no such thing)",
    re.IGNORECASE,
)
"""What is not there: a refusal of the command only as a whole first sentence (see above)."""
OVERLOADED = re.compile(
    r"\b(?:your load is too heavy|"
    r"(?:you'?re|you are) (?:already )?(?:carrying|holding) too (?:many|much)|"
    r"your hands are (?:too )?full|(?:you|you'?ve|you have) (?:got )?(?:your )?hands full|"
    r"you can'?t carry (?:any ?more|anything (?:else|more))|too (?:much|many things) to carry|"
    r"(?:more|any more) than you can carry|you'?re (?:already )?carrying as much as)\b",
    re.IGNORECASE,
)
"""The player carries too much to take more: a refusal about what is held."""
_CONTRAST = re.compile(r"\b(?:but|though|although|however|yet|while|whereas)\b|,\s*and\b|;")
ALREADY = re.compile(r"\balready\b", re.IGNORECASE)

_BANNER = re.compile(
    r"copyright|\(c\)|\u00a9|all rights reserved|trademark|\u2122|\u00ae|"
    r"\brelease \d|\bserial (?:number|no\.?|#)|\brevision \d|\binform v?\s?\d|\binform 7\b|"
    r"\blibrary \d+/\d|\bstandard interpreter|\binterpreter (?:version|\d)|\bzcode-|"
    r"\bversion \d|\bv\d+\.\d+\b|\b(?:www\.|https?://)|\S+@\S+\.\w+|"
    r"\b(?:type|try|use)\s+\"?'?(?:help|about|hints?|info|credits)\b|"
    r"\bpress (?:a|any|the space|space|return|enter)\b|\binteractive (?:fiction|classic)\b|"
    r"^an interactive\b",
    re.IGNORECASE,
)
"""A line of a game's banner or credits, not of its world."""
_STOCK = re.compile(
    r"^(?:time passes|taken|dropped|ok(?:ay)?|done|you wait|you can'?t go that way|"
    r"nothing happens|i beg your pardon|pardon|what do you want to \w+|"
    r"you see nothing (?:special|unusual|interesting)(?: about [^.!?]*)?|"
    r"(?:there'?s|there is) nothing (?:special|unusual|interesting) about [^.!?]*|"
    r"you are empty-handed|(?:i|you) (?:don'?t|do not) understand(?: that)?|"
    r"(?:that'?s|this is) not a verb i recognise|i only understood you as far as [^.!?]*|"
    r"you (?:already )?have (?:it|that|them)|sure|fine|your score is [^.!?]*)"
    r"[.!?]*$",
    re.IGNORECASE,
)
"""A sentence any game says to many commands: it tells nothing about this place."""


def without_speech(text: str) -> str:
    """`text` with quoted speech and quoted printed words taken out."""
    return _SPEECH.sub(" ", text)


def reply(response: str) -> str:
    """The game's reply to the command: its first paragraph (asides skipped), speech removed,
    whitespace collapsed."""
    for paragraph in _PARAGRAPH.split(without_speech(response)):
        lines = [line for line in paragraph.splitlines() if line.strip()]
        kept = [line for line in lines if not _ASIDE.match(line)]
        if kept:
            return " ".join(" ".join(kept).split())
    return ""


def first_sentence(text: str) -> str:
    """The first sentence of `text` (whitespace collapsed)."""
    flat = " ".join(text.split())
    return _SENTENCE.split(flat, maxsplit=1)[0] if flat else ""


def absent(words: str) -> bool:
    """Whether the reply says the thing is not here, as its whole first sentence."""
    head = first_sentence(words)
    found = ABSENCE.search(head)
    return found is not None and _CONTRAST.search(head, found.end()) is None


def refused(words: str) -> bool:
    """Whether the reply (see `reply`) refuses the command, plainly, politely or by absence."""
    if NO_NEED.search(words) or absent(words):
        return True
    return any(
        REFUSAL.search(sentence) and not _describes_absence(sentence)
        for sentence in _SENTENCE.split(words)
    )


def _describes_absence(sentence: str) -> bool:
    """"You can't see any exit, though ...": an absence that goes on to describe, not refuse."""
    found = ABSENCE.search(sentence)
    return found is not None and _CONTRAST.search(sentence, found.end()) is not None


def overloaded(words: str) -> bool:
    """Whether the reply says the player carries too much to take this ("Your load is too
    heavy.")."""
    return OVERLOADED.search(words) is not None


def declined(words: str) -> bool:
    """Whether the reply says there was nothing left to do ("You already have that!")."""
    return ALREADY.search(first_sentence(words)) is not None


def is_banner_line(line: str) -> bool:
    """Whether a line belongs to a banner or credits (copyright, trademark, release...)."""
    return _BANNER.search(line.strip()) is not None


def without_banners(text: str) -> str:
    """`text` without its banner lines."""
    return "\n".join(line for line in text.splitlines() if not is_banner_line(line))


def is_stock(sentence: str) -> bool:
    """Whether a sentence is a stock reply ("Taken.", "Time passes...", "OK.")."""
    return _STOCK.match(" ".join(sentence.split())) is not None


def is_junk(text: str) -> bool:
    """Whether `text` holds nothing but banner lines and stock replies (or nothing at all)."""
    kept = without_banners(text)
    return all(is_stock(s) for s in _SENTENCE.split(" ".join(kept.split())) if s.strip())
