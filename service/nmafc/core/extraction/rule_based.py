"""The default extractor: facts from messages with rules only, no model call.

For each sentence: score it and drop filler; resolve relative time against when it was
said; rewrite "I"/"you" to the speaker/addressee so it stands alone; choose its tier; find
the entities it names (the links spreading activation walks); and mark single-valued
attributes ("lives in", "works at") so a newer statement invalidates the older one.
Image captions that came with a message become facts of their own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from nmafc.core.entities import slugify
from nmafc.core.extraction import pronouns, timeexpr
from nmafc.core.extraction.rules import slot_for, tier_for
from nmafc.core.extraction.salience import proper_nouns, score
from nmafc.core.facts import FactDraft
from nmafc.core.text import keyword_terms, sentences
from nmafc.core.tiers import Tier
from nmafc.core.turns import Message

_ROLES = {"user": "User", "assistant": "Assistant", "system": "System"}
_TITLE = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")


@dataclass(frozen=True, slots=True)
class ExtractionConfig:
    min_importance: float = 0.3
    max_facts_per_message: int = 12


class RuleExtractor:
    """LLM-free extraction (SPEC §5)."""

    name = "rules"

    def __init__(self, config: ExtractionConfig | None = None) -> None:
        self.config = config or ExtractionConfig()

    def extract(self, messages: Sequence[Message]) -> list[FactDraft]:
        drafts: list[FactDraft] = []
        speakers = [_display(m.speaker_name) for m in messages]
        for index, message in enumerate(messages):
            speaker = speakers[index]
            addressee = _addressee(speakers, index)
            found = [
                d
                for sentence in sentences(message.content)
                if (d := self._fact(sentence, message, speaker, addressee, index)) is not None
            ]
            found.sort(key=lambda d: -d.importance)
            drafts += found[: self.config.max_facts_per_message]
            drafts += [self._caption(c, speaker, index) for c in message.captions if c.strip()]
        return drafts

    def _fact(
        self, sentence: str, message: Message, speaker: str, addressee: str | None, index: int
    ) -> FactDraft | None:
        said = message.occurred_at
        times = timeexpr.find(sentence, said) if said else []
        salience = score(sentence, has_time=bool(times))
        if salience.is_filler or salience.importance < self.config.min_importance:
            return None
        text = timeexpr.resolve(sentence, said)[0] if said and times else sentence
        text = pronouns.first_person(text, speaker)
        if addressee:
            text = pronouns.second_person(text, addressee)
        if speaker not in text:
            text = f"{speaker}: {text}"  # attribute it, so the fact still says who said it
        slot = slot_for(sentence)
        names = _names(sentence, speaker, addressee)
        topic = " ".join(keyword_terms(sentence, limit=4))
        entity = f"{speaker} {slot}" if slot else f"{speaker} {topic}"
        return FactDraft(
            content=text,
            entity=slugify(entity),
            tier=tier_for(sentence, has_time=bool(times)),
            importance=salience.importance,
            related_entities=tuple(slugify(n) for n in names),
            overrides_entity=slugify(entity) if slot else None,
            message_index=index,
        )

    @staticmethod
    def _caption(caption: str, speaker: str, index: int) -> FactDraft:
        topic = " ".join(keyword_terms(caption, limit=4))
        return FactDraft(
            content=f"{speaker} shared an image: {caption.strip()}",
            entity=slugify(f"{speaker} image {topic}"),
            tier=Tier.ACTIVE_CONTEXT,
            importance=0.4,
            related_entities=(slugify(speaker),),
            message_index=index,
        )


def _display(speaker: str) -> str:
    return _ROLES.get(speaker.lower(), speaker)


def _addressee(speakers: Sequence[str], index: int) -> str | None:
    """The nearest other speaker in the batch: who "you" most likely is."""
    me = speakers[index]
    for distance in range(1, len(speakers)):
        for other in (index - distance, index + distance):
            if 0 <= other < len(speakers) and speakers[other] != me:
                return speakers[other]
    return None


def _names(sentence: str, speaker: str, addressee: str | None) -> list[str]:
    """People, places and titles the sentence names, the speaker first."""
    found = [speaker]
    found += [t.strip() for t in _TITLE.findall(sentence)]
    phrase: list[str] = []
    for word in [*proper_nouns(sentence), ""]:
        if word and (
            not phrase or sentence.find(word) == sentence.find(phrase[-1]) + len(phrase[-1]) + 1
        ):
            phrase.append(word)
            continue
        if phrase:
            found.append(" ".join(phrase))
        phrase = [word] if word else []
    if addressee and re.search(r"\byou(?:r|rs|'re|'ve|'ll|'d)?\b", sentence, re.IGNORECASE):
        found.append(addressee)
    seen: dict[str, None] = {}
    for name in found:
        cleaned = name.strip(" '’s") if name.endswith(("'s", "’s")) else name.strip()
        if cleaned:
            seen.setdefault(cleaned, None)
    return list(seen)
