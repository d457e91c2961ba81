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
from dataclasses import dataclass, replace

from nmafc.core.entities import slugify
from nmafc.core.extraction import discourse, pronouns, timeexpr, topics
from nmafc.core.extraction.rules import slot_for, tier_for
from nmafc.core.extraction.salience import proper_nouns, score
from nmafc.core.facts import FactDraft
from nmafc.core.text import STOPWORDS, sentences
from nmafc.core.tiers import Tier
from nmafc.core.turns import Message

_ROLES = {"user": "User", "assistant": "Assistant", "system": "System"}
_AFTER_QUESTION = re.compile(r"(?<=\?)\s+(?=[a-z])")
_TITLE = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")


@dataclass(frozen=True, slots=True)
class ExtractionConfig:
    min_importance: float = 0.3
    max_facts_per_message: int = 12
    # An assistant's reply is mostly explanation the user can ask for again; what it says
    # about the user or the world sits in its few most salient units. Every fact is a
    # vector to embed and a line competing for the budget: on long-history imports
    # (LongMemEval-S) assistant turns averaged 18 sentences and gave 85% of the facts and
    # of the embedding time. The whole reply stays a turn, keyword-searchable and shown
    # as a source, so capping its facts loses no text.
    max_assistant_facts: int = 3
    max_unit_words: int = 60


# A sentence that opens with one of these leans on the sentence before it ("It was great",
# "So we left"): it is kept with its antecedent rather than stored as a fact about nothing.
_CONTINUATION = re.compile(
    r"^(?:it|it's|its|this|that|that's|these|those|they|they're|them|there|so|but|and|also|"
    r"plus|which|he|she|his|her|their|then|still|even|especially|though|although|"
    r"highly|definitely|totally|honestly|anyway)\b",
    re.IGNORECASE,
)


_NEEDS_CONTEXT_WORDS = 20


@dataclass(slots=True)
class _Unit:
    """A head sentence and the continuation sentences that lean on it."""

    sentences: list[str]
    importance: float

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


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
            units = self._units(message, [p for p in (speaker, addressee) if p])
            units.sort(key=lambda u: -u.importance)
            asked = _question_before(messages, speakers, index)
            cap = self.config.max_facts_per_message
            if message.role.lower() == "assistant":
                cap = min(cap, self.config.max_assistant_facts)
            drafts += [
                replace(
                    self._fact(unit, message, speaker, addressee, index),
                    # A long unit says what it is about; a short reply needs the question.
                    context=asked if len(unit.text.split()) <= _NEEDS_CONTEXT_WORDS else None,
                )
                for unit in units[:cap]
            ]
            drafts += [self._caption(c, speaker, index) for c in message.captions if c.strip()]
        return drafts

    def _units(self, message: Message, participants: Sequence[str]) -> list[_Unit]:
        """Group the message's sentences into self-contained units; drop filler."""
        units: list[_Unit] = []
        when = message.occurred_at
        assistant = message.role.lower() == "assistant"
        # A question mark ends a question even when chat carries on in lower case.
        said = [part for s in sentences(message.content) for part in _AFTER_QUESTION.split(s)]
        for said_sentence in said:
            sentence = discourse.as_statement(said_sentence)
            if sentence is None:
                continue  # a question stays the speaker's turn; it states no fact
            if assistant and discourse.is_assistant_chatter(sentence):
                continue  # "Sure, here you go", "Happy to help": nothing about the world
            has_time = bool(when and timeexpr.find(sentence, when))
            salience = score(sentence, has_time=has_time, participants=participants)
            if salience.is_filler:
                continue
            last = units[-1] if units else None
            leans = bool(_CONTINUATION.match(sentence)) or salience.content_words < 3
            if (
                last is not None
                and leans
                and len(last.text.split()) + len(sentence.split()) <= self.config.max_unit_words
            ):
                last.sentences.append(sentence)
                last.importance = max(last.importance, salience.importance)
            elif salience.importance >= self.config.min_importance:
                units.append(_Unit([sentence], salience.importance))
        return units

    def _fact(
        self, unit: _Unit, message: Message, speaker: str, addressee: str | None, index: int
    ) -> FactDraft:
        said = message.occurred_at
        raw = " ".join(discourse.strip_openers(s) for s in unit.sentences)
        text, times = timeexpr.resolve(raw, said) if said else (raw, [])
        text = pronouns.first_person(text, speaker)
        if addressee:
            text = pronouns.second_person(text, addressee)
        if speaker not in text:
            text = f"{speaker}: {text}"  # attribute it, so the fact still says who said it
        head = unit.sentences[0]
        slot = slot_for(head)
        about = topics.topic(discourse.strip_openers(head), exclude=(speaker, addressee or ""))
        entity = f"{speaker} {slot or about}"
        return FactDraft(
            content=text,
            entity=slugify(entity),
            tier=tier_for(raw, has_time=bool(times)),
            importance=unit.importance,
            related_entities=tuple(slugify(n) for n in _names(raw, speaker, addressee)),
            overrides_entity=slugify(entity) if slot else None,
            message_index=index,
        )

    @staticmethod
    def _caption(caption: str, speaker: str, index: int) -> FactDraft:
        about = topics.topic(caption)
        return FactDraft(
            content=f"{speaker} shared an image: {caption.strip()}",
            entity=slugify(f"{speaker} image {about}"),
            tier=Tier.ACTIVE_CONTEXT,
            importance=0.4,
            related_entities=(slugify(speaker),),
            message_index=index,
        )


def _question_before(
    messages: Sequence[Message], speakers: Sequence[str], index: int
) -> str | None:
    """The questions another speaker asked right before this message, if any."""
    if index == 0 or speakers[index - 1] == speakers[index]:
        return None
    asked = [s for s in sentences(messages[index - 1].content) if s.rstrip().endswith("?")]
    return " ".join(asked[-2:]) or None


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
    titles = [t.strip() for t in _TITLE.findall(sentence)]
    found += titles
    phrase: list[str] = []
    for word in [*proper_nouns(sentence), ""]:
        if word and (topics.is_date_word(word) or word.lower() in STOPWORDS):
            word = ""  # "March", "Friday": when, not what; a date word also ends a name
        if word and (
            not phrase or sentence.find(word) == sentence.find(phrase[-1]) + len(phrase[-1]) + 1
        ):
            phrase.append(word)
            continue
        if phrase and not any(" ".join(phrase) in title for title in titles):
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
