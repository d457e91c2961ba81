"""Varied memory sentences and questions for ``nmafc bench scale``.

Templates filled with random people, places, objects and pastimes: enough combinations
(≈ 10^8) that a pool of tens of thousands of distinct sentences repeats no text, and
keyword search sees the spread of words of real memories rather than one phrase.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

NAMES = (
    "Caroline", "Melanie", "Jon", "Gina", "Ana", "Tomas", "Priya", "Lee", "Omar", "Sofia",
    "Kenji", "Amara", "Lukas", "Ines", "Mateo", "Yara", "Felix", "Noor", "Hugo", "Leila",
    "Ravi", "Elena", "Marcus", "Chloe", "Dmitri", "Aisha", "Pablo", "Mei", "Oscar", "Zara",
    "Nikolai", "Freya", "Tariq", "Lucia", "Emil", "Hana", "Diego", "Astrid", "Kofi", "Maya",
)  # fmt: skip
PLACES = (
    "Lisbon", "Kyoto", "the lake house", "Nairobi", "the old library", "Oslo", "the farmers "
    "market", "Montreal", "the beach in Crete", "Buenos Aires", "the mountain cabin",
    "Edinburgh", "the night market", "Seoul", "the community garden", "Marrakech",
    "the harbour", "Vienna", "the climbing gym", "Cape Town", "the bakery on Elm Street",
    "Reykjavik", "the museum", "Hanoi", "the train station", "Prague", "the riverside park",
    "Lima", "the office", "Tbilisi",
)  # fmt: skip
OBJECTS = (
    "a red bicycle", "a vintage camera", "a leather notebook", "a ceramic teapot",
    "a wool scarf", "a telescope", "a cast-iron pan", "a ukulele", "a chess set",
    "a hiking backpack", "a film projector", "a sourdough starter", "a pair of skis",
    "a paper lantern", "a sewing machine", "a globe", "a kayak", "a typewriter",
    "a bonsai tree", "a record player", "a silver ring", "a tent", "a watercolour set",
    "a drone", "a rocking chair", "a fountain pen", "a surfboard", "an espresso machine",
    "a map of the Alps", "a jigsaw puzzle",
)  # fmt: skip
PASTIMES = (
    "pottery", "salsa dancing", "rock climbing", "birdwatching", "baking bread",
    "learning Portuguese", "marathon training", "painting portraits", "sailing",
    "playing the cello", "gardening", "astronomy", "woodworking", "chess tournaments",
    "photography", "volunteering at the shelter", "yoga", "cycling tours", "knitting",
    "stand-up comedy", "scuba diving", "calligraphy", "board games", "jazz piano",
    "trail running",
)  # fmt: skip
TIMES = (
    "last week", "on Saturday", "in March", "two years ago", "yesterday", "every Sunday",
    "over the summer", "on her birthday", "after work", "in the spring", "last night",
    "during the holidays",
)  # fmt: skip
TEMPLATES = (
    "{a} bought {o} at a shop in {p} {t}.",
    "{a} is planning a trip to {p} with {b} to try {h}.",
    "{a} told {b} that {o} was a gift from a friend in {p}.",
    "{a} started {h} {t} and says it helps with stress.",
    "{a} lost {o} somewhere near {p} {t}.",
    "{a} and {b} met for the first time in {p} {t}.",
    "{a}'s favourite place for {h} is {p}.",
    "{a} borrowed {o} from {b} {t} and still has it.",
    "{a} wants to give up {h} because of a knee injury.",
    "{a} keeps {o} on the shelf next to the photos from {p}.",
    "{a} recommended {h} to {b}, who tried it {t}.",
    "{a} moved to {p} {t} for a new job.",
    "{a} is saving money for {o} and lessons in {h}.",
    "{a} won a prize for {h} at an event in {p}.",
    "{a} fixed {o} for {b} {t}.",
    "{a} dislikes {p} in winter but loves it for {h}.",
)
QUESTIONS = (
    "What did {a} buy in {p}?",
    "Where does {a} like to go for {h}?",
    "What happened between {a} and {b}?",
    "Why did {a} start {h}?",
    "What does {a} keep from {p}?",
    "Who did {a} meet {t}?",
    "What is {a} saving money for?",
    "Where did {a} lose {o}?",
)


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    entity: str  # the person and pastime the sentence is about
    related: str  # the other person it names


def sentence(rng: random.Random) -> Sentence:
    """One memory sentence; its entity names its subject and pastime."""
    a, b = rng.sample(NAMES, 2)
    h = rng.choice(PASTIMES)
    text = rng.choice(TEMPLATES).format(
        a=a, b=b, p=rng.choice(PLACES), o=rng.choice(OBJECTS), h=h, t=rng.choice(TIMES)
    )
    return Sentence(text, f"{a}:{h}", f"{b}:{h}")


def distinct_sentences(count: int, rng: random.Random) -> list[Sentence]:
    """``count`` sentences, no two with the same text."""
    seen: set[str] = set()
    out: list[Sentence] = []
    while len(out) < count:
        s = sentence(rng)
        if s.text not in seen:
            seen.add(s.text)
            out.append(s)
    return out


def question(rng: random.Random) -> str:
    """A question of the kind an agent asks its memory about these sentences."""
    a, b = rng.sample(NAMES, 2)
    return rng.choice(QUESTIONS).format(
        a=a, b=b, p=rng.choice(PLACES), o=rng.choice(OBJECTS), h=rng.choice(PASTIMES),
        t=rng.choice(TIMES),
    )  # fmt: skip
