"""What a fact is about: the things it names, never a date word or the whole sentence.

A fact's entity key is ``<speaker> <topic>``, the topic being at most two words naming a
thing: a quoted title, else the first content words that are not verbs, adverbs, bare
evaluations ("great", "excited") or time words ("march", "friday", "yesterday"). So "I went
to a support group yesterday" said by Caroline is about ``caroline_support_group``, and
the graph's nodes read as people, places and things rather than slugs of sentences.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Collection

from nmafc.core.extraction.verbs import IRREGULAR_PASTS
from nmafc.core.text import STOPWORDS, words

TOPIC_WORDS = 2

CALENDAR_WORDS = frozenset(
    [m.lower() for m in calendar.month_name if m]
    + [m.lower() for m in calendar.month_abbr if m]
    + [d.lower() for d in calendar.day_name]
    + [d.lower() for d in calendar.day_abbr]
    + "sept tues thur thurs today tonight tomorrow yesterday spring summer autumn winter".split()
)
DATE_WORDS = CALENDAR_WORDS | frozenset(
    """morning afternoon evening night noon midnight weekend weekends week weeks month
    months year years day days fall ago later earlier recently lately currently now time
    times moment""".split()
)

# Frequent verbs that are rarely the thing a fact is about (all their forms are skipped).
# Verbs that are as often nouns ("work", "play", "paint", "dance", "cook") are not here.
_VERB_LEMMAS = """be go get love like want think know feel make take see come try give tell
say find keep let seem hope wish need enjoy start finish begin decide learn remember forget
believe mean become help meet bring buy send pay spend leave stay live move join visit
attend watch hear listen write grow speak ask answer show share happen sound look guess miss
lose win hold sit stand drive fly travel adopt open create build check change continue reach
allow include consider appear expect suppose suggest realize realise wonder imagine
appreciate recommend manage handle pick choose celebrate return receive agree prefer hate
adore use put call mention plan hang wait turn stop""".split()
_IRREGULAR_FORMS = """am is are was were been being went gone got gotten saw seen made took
taken came gave given found thought told said knew known felt left kept met began begun
bought brought sent paid spent became held lost won sat stood drove driven flew flown grew
grown wrote written spoke spoken chose chosen heard meant ate eaten did done had has gonna
wanna gotta""".split()
_EVALUATIVE = """good great amazing awesome nice fun happy excited glad new old big little
small best better favorite favourite lovely beautiful cool hard tough busy tired real sure
super pretty much many lot lots bit thing things stuff way kind sort cute proud grateful
thankful lucky sorry wonderful fantastic incredible interesting exciting awful terrible
bad sad special whole own totally definitely especially absolutely literally also able
one two three first last next photo picture image pic since though although because unless
until whether yet still even themself themselves around together away back somewhat quite
rather almost maybe perhaps keen hey four five six seven eight nine ten twenty thirty forty
fifty hundred thousand couple few several""".split()


def _forms(lemma: str) -> set[str]:
    stem = lemma[:-1] if lemma.endswith("e") else lemma
    forms = {lemma, lemma + "s", lemma + "es", lemma + "d", lemma + "ed", stem + "ing"}
    if lemma.endswith("y"):
        forms |= {lemma[:-1] + "ies", lemma[:-1] + "ied"}
    if len(lemma) >= 3 and lemma[-1] not in "aeiouwy" and lemma[-2] in "aeiou":
        forms |= {lemma + lemma[-1] + "ed", lemma + lemma[-1] + "ing"}
    return forms


_NOT_A_TOPIC = (
    frozenset(f for lemma in _VERB_LEMMAS for f in _forms(lemma))
    | frozenset(_IRREGULAR_FORMS)
    | IRREGULAR_PASTS
    | frozenset(_EVALUATIVE)
    | DATE_WORDS
)
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")


def is_date_word(word: str) -> bool:
    """True for a month, a weekday, a season or a relative day ("today", "tomorrow")."""
    return word.lower().strip(".") in CALENDAR_WORDS


def topic(sentence: str, exclude: Collection[str] = ()) -> str:
    """At most two words naming what ``sentence`` is about ("" if it names nothing)."""
    title = _QUOTED.search(sentence)
    if title:
        return " ".join(words(title.group(1))[:4])
    skip = {e.lower() for e in exclude}
    found: list[str] = []
    for word in words(sentence):
        base = word.split("'", 1)[0]
        if (
            base in STOPWORDS
            or word in STOPWORDS
            or base in skip
            or base in _NOT_A_TOPIC
            or len(base) < 3
            or base.isdigit()
            or (base.endswith("ly") and len(base) > 4)
            or (base.endswith("ed") and len(base) > 4)
        ):
            if found:
                break  # the topic is one run of adjacent words, not words from all over
            continue
        found.append(base)
        if len(found) == TOPIC_WORDS:
            break
    return " ".join(found)
