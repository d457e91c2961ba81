"""Tier and single-valued-attribute rules for LLM-free extraction.

Tiers decide how long a fact lives, so the rules err towards keeping: only clearly
momentary states are EphemeralState; identity, relationships, lasting preferences and
completed dated events are CoreAnchor; plans and ongoing states are ActiveContext.
"""

from __future__ import annotations

import re

from nmafc.core.tiers import Tier

_EPHEMERAL = re.compile(
    r"\b(?:I'?m|I am|I feel|I'm feeling|I am feeling|feeling|I felt)\s+(?:so\s+|really\s+|a bit\s+|"
    r"kind of\s+|pretty\s+|very\s+)?(?:tired|exhausted|sleepy|hungry|thirsty|bored|sick|"
    r"stressed|nervous|anxious|excited|happy|sad|grumpy|cold|hot|busy|swamped|great|good|okay|ok|"
    r"fine|down|upset|annoyed|frustrated|overwhelmed|relaxed|calm)\b(?![^.!?]*\b(?:about|because|"
    r"since|for|with|after|that)\b)|\b(?:right now|at the moment|this very moment)\b|"
    r"\bcan'?t wait\b",
    re.IGNORECASE,
)
_CORE = re.compile(
    r"\bmy (?:husband|wife|partner|spouse|boyfriend|girlfriend|fianc[eé]e?|son|daughter|kids?|"
    r"children|child|mom|mother|mum|dad|father|parents?|brother|sister|siblings?|grandma|"
    r"grandmother|grandpa|grandfather|aunt|uncle|cousin|family|best friend|dog|cat|pet|puppy|"
    r"name|birthday|hometown|home country|religion|heritage)\b|\ballergic\b|\ballergy\b|"
    r"\b(?:I was born|I grew up|I'?m from|I am from|I come from|I identify as|I'?ve known|"
    r"I have known|I'?m (?:a|an) [a-z]+ (?:woman|man|person|parent|mom|dad)|"
    r"I (?:love|adore|hate|enjoy|prefer|can't stand)|my fav(?:ou?rite)|diagnosed|vegan|"
    r"vegetarian|years ago|since I was)\b",
    re.IGNORECASE,
)
_PLAN = re.compile(
    r"\b(?:going to|gonna|will|plan(?:ning)?|thinking (?:about|of)|want to|wanna|hope to|"
    r"hoping to|intend|next|upcoming|soon|working on|training|learning|currently|these days|"
    r"trying to|looking (?:into|for|forward)|considering|schedule[ds]?|appointment|deadline|"
    r"goal)\b",
    re.IGNORECASE,
)
_PAST_EVENT = re.compile(
    r"\b(?:went|visited|attended|ran|finished|completed|graduated|married|moved|adopted|"
    r"bought|started|joined|won|lost|met|took|made|gave|painted|wrote|read|signed up|"
    r"travel(?:l)?ed|celebrated|had)\b",
    re.IGNORECASE,
)

_SLOTS: list[tuple[str, re.Pattern[str]]] = [
    (
        "lives_in",
        re.compile(
            r"\bI (?:now |currently |still )?(?:live|am living|'m living|reside) in\b|"
            r"\bI (?:just |recently |finally )?(?:moved|relocated) to\b|\bmy home is (?:in|now)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "works_at",
        re.compile(
            r"\bI (?:now |currently )?(?:work|am working|'m working) (?:at|for)\b|"
            r"\bmy (?:new |current )?job (?:is )?at\b|\bI (?:got|landed|accepted) (?:a |the )?"
            r"(?:new )?job (?:at|with)\b|\bI (?:was|got) (?:hired|promoted) (?:at|by)\b",
            re.IGNORECASE,
        ),
    ),
    ("name", re.compile(r"\bmy name is\b|\bcall me\b", re.IGNORECASE)),
    (
        "relationship_status",
        re.compile(
            r"\bI'?m (?:now |still )?(?:single|married|engaged|divorced|separated|widowed|"
            r"dating someone|in a relationship)\b|\bI am (?:now |still )?(?:single|married|"
            r"engaged|divorced|separated|widowed)\b|"
            r"\bwe (?:got|are) (?:married|engaged|divorced)\b|"
            r"\bwe broke up\b",
            re.IGNORECASE,
        ),
    ),
]
_FAVOURITE = re.compile(r"\bmy fav(?:ou?rite) ([a-z]+(?: [a-z]+)?) (?:is|are|has to be)\b", re.I)


def tier_for(sentence: str, *, has_time: bool) -> Tier:
    """The tier a fact stated by ``sentence`` belongs in."""
    if _CORE.search(sentence):
        return Tier.CORE_ANCHOR
    if _EPHEMERAL.search(sentence) and not has_time and not _PLAN.search(sentence):
        return Tier.EPHEMERAL_STATE
    if _PLAN.search(sentence):
        return Tier.ACTIVE_CONTEXT
    if has_time and _PAST_EVENT.search(sentence):
        return Tier.CORE_ANCHOR  # a completed, dated event does not stop being true
    return Tier.ACTIVE_CONTEXT


def slot_for(sentence: str) -> str | None:
    """The single-valued attribute a first-person sentence sets, if any."""
    favourite = _FAVOURITE.search(sentence)
    if favourite:
        return "favourite_" + re.sub(r"\W+", "_", favourite.group(1).lower())
    for slot, pattern in _SLOTS:
        if pattern.search(sentence):
            return slot
    return None
