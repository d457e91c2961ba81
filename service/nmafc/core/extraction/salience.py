"""How much a sentence is worth remembering, and which sentences are filler.

A memory is only as good as what it leaves out: greetings, thanks, back-channel ("Wow,
that's cool!") and content-free questions crowd the budget without answering anything. The
score rewards what questions ask about — names, numbers, dates, specific content words —
and the threshold drops the rest.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from nmafc.core.text import STOPWORDS, words

_FILLER_PHRASES = re.compile(
    r"\b(?:hey|hi|hello|yo|wow|whoa|oh|ah|aw+|omg|haha+|lol|yeah|yep|yes|nope|ok(?:ay)?|"
    r"sure|cool|great|awesome|nice|amazing|wonderful|fantastic|lovely|sweet|incredible|"
    r"thanks?(?: you)?(?: so much)?|congrats|congratulations|bye|goodbye|see you|"
    r"talk (?:to you )?(?:soon|later)|take care|same here|me too|good (?:morning|night)|"
    r"good to (?:see|hear from) you|glad to hear(?: that)?|sounds (?:good|fun)|"
    r"that's|that is|so|really|totally|exactly|absolutely|definitely|of course|no worries|"
    r"no problem|you too|welcome|good luck|agreed|indeed|true|right|interesting|impressive|"
    r"beautiful|gorgeous|stunning|inspiring|glad|happy for you|proud of you|keep it up|"
    r"how (?:are|have) you(?: been)?|what's up|how's it going|hope all's good)\b",
    re.IGNORECASE,
)
_QUESTION_OPENER = re.compile(
    r"^(?:what|how|why|when|where|who|which|do|does|did|are|is|was|were|have|has|can|could|"
    r"would|will|any|anything)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d")
_QUOTED = re.compile(r"[\"“][^\"”]{2,80}[\"”]")
_POSSESSIVE = re.compile(r"['’]s$")
_NAME = re.compile(r"\b[A-Z][a-zA-Z'’-]+")
# A name used to address someone ("Thanks, Mel!", "Hey Sam!") says nothing about the world.
_VOCATIVE = re.compile(
    r"(?:^|,\s*|\b(?:hey|hi|hello|thanks|thank you|yep|yeah|yes|wow|oh|bye)\s+)"
    r"[A-Z][a-z]+(?=\s*(?:[!.,?~]|$))",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Salience:
    importance: float
    content_words: int
    is_filler: bool
    is_question: bool


def proper_nouns(sentence: str) -> list[str]:
    """Capitalised words that are not sentence-initial and not the pronoun "I"."""
    found = []
    for match in _NAME.finditer(sentence):
        before = sentence[: match.start()].rstrip()
        if not before or before[-1] in ".!?:(–-" or match.group(0) in ("I", "I'm", "I've"):
            continue
        found.append(match.group(0))
    return found


def score(sentence: str, *, has_time: bool = False, participants: Collection[str] = ()) -> Salience:
    """Importance in [0, 1]; filler and content-free questions score low.

    ``participants`` are the people in the conversation: their names in a sentence
    ("Woohoo Mel!", "Congrats, Sam") address someone rather than say something.
    """
    stripped = sentence.strip()
    addressed = _VOCATIVE.sub(" ", stripped)
    remainder = _FILLER_PHRASES.sub(" ", addressed)
    present = {p.lower() for p in participants}
    content = [
        w
        for w in words(remainder)
        if w not in STOPWORDS and len(w) > 2 and _POSSESSIVE.sub("", w) not in present
    ]
    names = {n for n in proper_nouns(addressed) if _POSSESSIVE.sub("", n.lower()) not in present}
    is_question = stripped.endswith("?") or bool(_QUESTION_OPENER.match(stripped))
    is_filler = len(content) <= 1 and not names and not _NUMBER.search(remainder)
    value = 0.25
    value += min(0.3, 0.1 * len(names))
    value += 0.15 if _NUMBER.search(stripped) else 0.0
    value += 0.15 if has_time else 0.0
    value += 0.1 if _QUOTED.search(stripped) else 0.0
    value += min(0.25, 0.035 * len(content))
    if is_question:
        value -= 0.15
    if is_filler:
        value = min(value, 0.1)
    return Salience(round(max(0.0, min(1.0, value)), 3), len(content), is_filler, is_question)
