"""Rewriting first and second person so a sentence stands alone, and grammatically.

"I live in Lisbon" said by Bob becomes "Bob lives in Lisbon"; "You'd be a great counselor"
said to Caroline becomes "Caroline would be a great counselor". A stored fact outlives its
conversation: without this, "I" means nobody. The verb after the new third-person subject
is made to agree with it (am → is, have → has, do → does, love → loves; past tenses and
modal verbs unchanged), a reflexive becomes the neutral "themself", a compound subject
("my wife and I have", "you and I are") keeps its plural verb, and "I" repeated after
"and" in a sentence that opens with it is left out ("… and lives in Lisbon").
"""

from __future__ import annotations

import re

from nmafc.core.extraction.verbs import agree

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'"})

# Words that may sit between a subject and its verb ("I really love", "I kind of want").
_ADVERB = (
    r"(?:kind of|sort of|just|also|still|always|never|usually|often|sometimes|now|even|only|"
    r"already|ever|then|kinda|sorta|first|once|almost|soon|too|"
    r"(?!(?:apply|reply|supply|imply|multiply|comply|bully|rally|tally|rely)\b)[a-z]{3,}ly)"
)
_ADVERBS = rf"(?P<advs>(?:\s+{_ADVERB})*)"
_VERB = r"(?:\s+(?P<verb>[A-Za-z]+(?:'t)?))?(?![\w'])"
_FIRST_SUBJECT = re.compile(rf"(?<![\w'])I(?P<clitic>'m|'ve|'ll|'d|m(?=\s))?{_ADVERBS}{_VERB}")
_SECOND_SUBJECT = re.compile(
    rf"(?<![\w'])(?P<you>[Yy]ou)(?P<clitic>'re|'ve|'ll|'d)?{_ADVERBS}{_VERB}"
)
# A sentence whose subject is "I" from its first word ...
_OPENS_WITH_I = re.compile(r"\s*I(?:'m|'ve|'ll|'d|m)?(?![\w'])")
# ... repeats it after "and" following a lowercase word ("a vegetarian and I live"), unless
# that word and "I" are one subject ("you and I are", "my wife and I"; see _COMPOUND).
_AND_AGAIN = re.compile(r"(?<![\w'])[a-z][\w']*,?\s+and\s+$")
# A clause opened in between may be what "and" continues ("… when things are busy and I'm
# nervous"): then "I" stays.
_CLAUSE_OPENER = re.compile(
    r"\b(?:when|whenever|if|because|that|while|since|as|although|though|unless|until|where|"
    r"who|which|what|how|why|after|before|once|so)\b",
    re.IGNORECASE,
)
# "am I", "are you": the inverted verb agrees too (only in questions, kept as turns).
_INVERTED_FIRST = re.compile(r"(?<![\w'])([Aa])m(\s+)I(?![\w'])")

_CLITIC_SINGULAR = {
    "'m": " is",
    "m": " is",
    "'re": " is",
    "'ve": " has",
    "'ll": " will",
    "'d": " would",
}
_CLITIC_PLURAL = {
    "'m": " am",
    "m": " am",
    "'re": " are",
    "'ve": " have",
    "'ll": " will",
    "'d": " would",
}

# Words after which a subject begins: conjunctions, clause openers, verbs of thinking
# ("I think you need", "I think my wife and I are").
_SUBJECT_OPENERS = (
    r"and|but|or|so|because|if|when|whenever|that|since|while|as|than|though|although|unless|"
    r"until|whether|where|what|how|why|who|once|before|after|like|anytime|wherever|everywhere|"
    r"whatever|both|think|thought|know|knew|hope|bet|guess|believe|mean|feel|heard|said|sure|glad"
)
# Before "I"/"you": a plural compound subject ("my wife and I") or an auxiliary that
# already carries the tense ("do I need", "can you see") — the verb stays as it is. "my
# wife" or "you" opens a compound only where a subject can begin: in "I love my wife and
# I think" it is the object of "love", and "I think" agrees on its own.
_COMPOUND = re.compile(
    rf"(?:(?:^\s*|[,;:.!?]\s*|(?<![\w'])(?i:{_SUBJECT_OPENERS})\s+)"
    r"(?:(?i:my|our|the|his|her|their)(?:\s+[\w']+){0,2}|(?i:you))"
    r"|(?:^|[,;:.!?]\s*)[A-Z][\w']*(?:\s+[A-Z][\w']*)?"
    r"|(?<![\w'])(?i:he|she|we|they))\s+(?:and|or|nor)\s+$"
)
_AUXILIARY = re.compile(
    r"\b(?:do|does|did|don't|doesn't|didn't|can|could|will|would|shall|should|may|might|must|"
    r"have|has|had|is|are|was|were|am|let|make|made|help|helped|watch|see|saw|hear|heard)\s+$",
    re.IGNORECASE,
)
# "you" is a subject after a sentence start, punctuation, a conjunction or a verb of
# thinking ("I think you need"); elsewhere it is an object ("I told you everything").
_SUBJECT_SLOT = re.compile(
    rf"(?:^|[,;:(\u2013\u2014-]\s*|\b(?:{_SUBJECT_OPENERS})\s+)$", re.IGNORECASE
)

_FIRST_OBJECTS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?<![\w'])myself(?![\w'])", re.IGNORECASE), "themself"),
    (re.compile(r"(?<![\w'])mine(?![\w'])", re.IGNORECASE), "{n}'s"),
    (re.compile(r"(?<![\w'])my(?![\w'])", re.IGNORECASE), "{n}'s"),
    (re.compile(r"(?<![\w'])me(?![\w'])", re.IGNORECASE), "{n}"),
]
_SECOND_OBJECTS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?<![\w'])yourselves(?![\w'])", re.IGNORECASE), "themselves"),
    (re.compile(r"(?<![\w'])yourself(?![\w'])", re.IGNORECASE), "themself"),
    (re.compile(r"(?<![\w'])yours(?![\w'])", re.IGNORECASE), "{n}'s"),
    (re.compile(r"(?<![\w'])your(?![\w'])", re.IGNORECASE), "{n}'s"),
    (re.compile(r"(?<![\w'])you(?![\w'])", re.IGNORECASE), "{n}"),
]


def _subject(match: re.Match[str], name: str, *, conjugate: bool) -> str:
    """The name, then the clitic or verb made to agree with a third-person subject."""
    before = match.string[: match.start()]
    clitic = match.group("clitic")
    plural = not clitic and bool(_COMPOUND.search(before))
    advs = match.group("advs") or ""
    verb = match.group("verb")
    out = name
    if clitic:
        out += (_CLITIC_PLURAL if plural else _CLITIC_SINGULAR)[clitic]
    out += advs
    if verb:
        settled = bool(clitic) or plural or bool(_AUXILIARY.search(before)) or not conjugate
        out += " " + (verb if settled else agree(verb))
    return out


def first_person(sentence: str, speaker: str) -> str:
    """Replace I / me / my / mine / myself with the speaker, verbs agreeing with the name.

    A sentence that opens with "I" names the speaker once: "I'm a vegetarian and I live in
    Lisbon" becomes "Bob is a vegetarian and lives in Lisbon".
    """
    text = sentence.translate(_APOSTROPHES)
    text = _INVERTED_FIRST.sub(lambda m: f"{'I' if m.group(1) == 'A' else 'i'}s{m.group(2)}I", text)
    opens_with_i = bool(_OPENS_WITH_I.match(text))

    def subject(match: re.Match[str]) -> str:
        said = _subject(match, speaker, conjugate=True)
        return said[len(speaker) + 1 :] if opens_with_i and _repeated(match) else said

    text = _FIRST_SUBJECT.sub(subject, text)
    for pattern, replacement in _FIRST_OBJECTS:
        text = pattern.sub(replacement.format(n=speaker), text)
    return _possessive_fix(text, speaker)


def _repeated(match: re.Match[str]) -> bool:
    """True if this "I" repeats the sentence's subject after "and" and can be left out."""
    before = match.string[: match.start()]
    has_verb = bool(match.group("clitic") or match.group("verb"))
    return (
        has_verb
        and bool(_AND_AGAIN.search(before))
        and not _COMPOUND.search(before)
        and not _CLAUSE_OPENER.search(before)
    )


def second_person(sentence: str, addressee: str) -> str:
    """Replace you / your / yours / yourself with the addressee, verbs agreeing with the name."""
    text = sentence.translate(_APOSTROPHES)

    def subject(match: re.Match[str]) -> str:
        before = match.string[: match.start()]
        verb = (match.group("verb") or "").lower()
        # "you are / were / have / don't" always agree; another verb only after "you" as
        # a subject, or "I told you everything" would become "... Ana everythings".
        be_or_have = verb in {"are", "were", "have", "aren't", "weren't", "haven't", "do", "don't"}
        return _subject(
            match, addressee, conjugate=be_or_have or bool(_SUBJECT_SLOT.search(before))
        )

    text = _SECOND_SUBJECT.sub(subject, text)
    for pattern, replacement in _SECOND_OBJECTS:
        text = pattern.sub(replacement.format(n=addressee), text)
    return _possessive_fix(text, addressee)


def _possessive_fix(text: str, name: str) -> str:
    # "Caroline's's" can appear when the source already had a possessive.
    return text.replace(f"{name}'s's", f"{name}'s")
