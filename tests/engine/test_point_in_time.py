"""Point-in-time recall sees memory as it was: nothing said after ``as_of`` reaches it.

The property test plays random conversations in which every turn (and every explicit fact
or edit) carries a unique marker token, then asks point-in-time questions that name
markers from before and after ``as_of``, dates of later turns and questions whose reply
came later; no marker said after ``as_of`` may appear in the context or in any hit.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nmafc.core.facts import FactDraft
from nmafc.core.scope import AgentScope, Scope
from nmafc.core.tiers import Tier
from nmafc.core.turns import Message
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions, RecallResult

from .helpers import START, say

MARKER = re.compile(r"\bzq[a-z]{3}\b")
TOPICS = ["Lisbon", "marathon", "concert", "puppy"]
TEMPLATES = [
    "I live in {topic} now {marker}.",
    "We talked about the {topic} again {marker}.",
    "Who was at the {topic} {marker}?",
    "What did we say about the {topic} {marker}?",
    "It was great, the {topic} was lovely {marker}.",
    "ok {marker}",
]
HOURS_BETWEEN_TURNS = 7  # turns fall on several calendar days, so dated questions differ


def _marker(n: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return "zq" + letters[n // 676 % 26] + letters[n // 26 % 26] + letters[n % 26]


@dataclass(frozen=True)
class Said:
    """Where and when one marker entered memory."""

    marker: str
    conversation: str
    turn: float
    at: datetime


@dataclass
class Played:
    """A played conversation set: what was said, and the scopes it went to."""

    agent: str
    said: list[Said] = field(default_factory=list)
    last_time: datetime = START


# One step: (conversation index, kind, template index, topic index). Kinds: a remembered
# message, an explicit fact (overriding the previous explicit one of its conversation), or
# an edit of an earlier fact.
steps = st.lists(
    st.tuples(
        st.integers(0, 1),
        st.sampled_from(["say", "say", "say", "fact", "edit"]),
        st.integers(0, len(TEMPLATES) - 1),
        st.integers(0, len(TOPICS) - 1),
    ),
    min_size=2,
    max_size=9,
)


def _play(engine: MemoryEngine, plan: list[tuple[int, str, int, int]], maintain: bool) -> Played:
    played = Played(agent=f"agent-{uuid.uuid4().hex[:8]}")
    turns = {0: 0.0, 1: 0.0}
    explicit: dict[int, str] = {}
    for n, (conv, kind, template, topic) in enumerate(plan):
        scope = Scope(played.agent, f"c{conv}")
        marker = _marker(n)
        text = TEMPLATES[template].format(topic=TOPICS[topic], marker=marker)
        if kind == "say":
            at = START + timedelta(hours=HOURS_BETWEEN_TURNS * n)
            played.last_time = at
            message = Message(text, role="user", speaker="Caroline", occurred_at=at)
            turns[conv] = engine.remember(scope, [message]).turn
            played.said.append(Said(marker, scope.conversation_id, turns[conv], at))
            continue
        if kind == "edit":
            live = list(engine.working_set(scope).values())
            if not live:
                continue
            before = datetime.now(UTC)
            engine.update(scope, live[0].id, content=text)
            played.said.append(Said(marker, scope.conversation_id, turns[conv], before))
            continue
        before = datetime.now(UTC)
        draft = FactDraft(
            text, f"fact-{conv}-{n}", Tier.ACTIVE_CONTEXT, overrides_entity=explicit.get(conv)
        )
        engine.ingest(scope, [draft])
        explicit[conv] = f"fact-{conv}-{n}"
        played.said.append(Said(marker, scope.conversation_id, turns[conv], before))
    if maintain:  # merges near-duplicates, which extends a survivor's source turns
        for conv in turns:
            engine.maintain(Scope(played.agent, f"c{conv}"))
    return played


def _shown(result: RecallResult) -> set[str]:
    """Every marker in the context or in any hit."""
    texts = [result.context]
    for hit in result.hits:
        texts.append(hit.content)
        if hit.record is not None:
            texts.append(hit.record.content)
        if hit.turn is not None:
            texts.append(hit.turn.content)
    return {m for text in texts for m in MARKER.findall(text)}


def _question(played: Played, picks: list[int], dated: int | None, topic: int) -> str:
    markers = [played.said[i % len(played.said)].marker for i in picks]
    words = " ".join([TOPICS[topic], *markers])
    if dated is None:
        return f"Who was at the {words}?"
    day = played.said[dated % len(played.said)].at
    return f"What happened with the {words} on {day:%d %B %Y}?"


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    plan=steps,
    maintain=st.booleans(),
    questions=st.lists(
        st.tuples(
            st.lists(st.integers(0, 50), min_size=1, max_size=3),
            st.none() | st.integers(0, 50),
            st.integers(0, len(TOPICS) - 1),
            st.integers(0, 50),
            st.integers(0, 2),
            st.booleans(),
        ),
        min_size=1,
        max_size=3,
    ),
)
def test_point_in_time_recall_shows_nothing_said_after_as_of(
    engine: MemoryEngine,
    plan: list[tuple[int, str, int, int]],
    maintain: bool,
    questions: list[tuple[list[int], int | None, int, int, int, bool]],
) -> None:
    played = _play(engine, plan, maintain)
    if not played.said:
        return
    for picks, dated, topic, cut, nudge, agent_wide in questions:
        # The question names what was said at the cut: if that was a question, its reply
        # (said after the cut) is what the reply search would bring along.
        query = _question(played, [cut, *picks], dated, topic)
        reach = AgentScope(played.agent) if agent_wide else Scope(played.agent, "c0")

        def within(said: Said, reach: AgentScope | Scope = reach) -> bool:
            return isinstance(reach, AgentScope) or said.conversation == reach.conversation_id

        # Cut at something said (exactly, or just before or after it), so that a question
        # or a fact right at the cut is searched while its reply or its override is not.
        point = played.said[cut % len(played.said)]
        # By turn: a turn number (per conversation, as facts' valid_at is).
        as_of = max(0.0, point.turn + (nudge - 1))
        result = engine.recall(reach, query, RecallOptions(as_of=as_of, reinforce=False))
        allowed = {s.marker for s in played.said if within(s) and s.turn <= as_of}
        assert _shown(result) <= allowed, (query, as_of, _shown(result) - allowed)

        # By time: said at or before the instant (explicit facts and edits were made now).
        moment = point.at + timedelta(seconds=nudge - 1)
        result = engine.recall(reach, query, RecallOptions(as_of_time=moment, reinforce=False))
        allowed = {s.marker for s in played.said if within(s) and s.at <= moment}
        assert _shown(result) <= allowed, (query, moment, _shown(result) - allowed)


def test_a_later_move_is_not_shown_before_it_was_said(engine: MemoryEngine, scope: Scope) -> None:
    engine.remember(scope, [say("I live in Lisbon.")])
    engine.remember(scope, [say("Nice weather today, the sun is out.", minutes=1)])
    engine.remember(scope, [say("Actually I live in Porto now.", minutes=2)])
    then = engine.recall(scope, "where do I live", RecallOptions(as_of=1, reinforce=False))
    assert "Lisbon" in then.context
    assert "Porto" not in then.context
    assert all("Porto" not in hit.content for hit in then.hits)
    timed = engine.recall(
        scope,
        "where do I live",
        RecallOptions(as_of_time=START + timedelta(seconds=30), reinforce=False),
    )
    assert "Lisbon" in timed.context
    assert "Porto" not in timed.context


def test_a_fact_closed_later_shows_as_it_was_then(engine: MemoryEngine, scope: Scope) -> None:
    engine.remember(scope, [say("hello")])
    paris = engine.ingest(scope, [FactDraft("Alice lives in Paris", "alice_home")]).added[0]
    engine.remember(scope, [say("time passes")] * 2)
    berlin = FactDraft("Alice lives in Berlin", "alice_2", overrides_entity="alice_home")
    engine.ingest(scope, [berlin])
    then = engine.recall(scope, "where does Alice live", RecallOptions(as_of=2, reinforce=False))
    (hit,) = [h for h in then.hits if h.id == paris.id]
    assert hit.record is not None
    assert (hit.record.invalid_at, hit.record.invalid_reason) == (None, None)
    assert "Paris" in then.context
    assert "until" not in then.context  # the override at turn 3 had not happened yet
    now = engine.get(scope, paris.id)
    assert now.invalid_reason == "override"  # the stored record is untouched


def test_an_edit_is_not_seen_before_it_was_made(engine: MemoryEngine, scope: Scope) -> None:
    fact = engine.remember(scope, [say("I drive a red Toyota.")]).added[0]
    engine.remember(scope, [say("time passes", minutes=1)])
    edited = engine.update(scope, fact.id, content="Caroline drives a blue Honda.")
    assert (edited.valid_at, edited.version) == (2.0, 2)
    versions = engine.history(scope, fact.id).versions
    assert versions[0].invalid_at_time == versions[1].valid_at_time  # the windows abut
    before = engine.recall(scope, "what car", RecallOptions(as_of=1, reinforce=False))
    assert "Toyota" in before.context
    assert "Honda" not in before.context
    after = engine.recall(scope, "what car", RecallOptions(as_of=2, reinforce=False))
    assert "Honda" in after.context.split("</FACTS>")[0]
    assert "Toyota" not in after.context.split("</FACTS>")[0]


def test_a_question_matched_before_the_cut_does_not_bring_a_later_reply(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(scope, [say("Who played at the concert?", speaker="Melanie")])
    engine.remember(scope, [say("It was Matt Patterson, he was great.", minutes=1)])
    question = "Who played at the concert?"
    assert "Matt" in engine.recall(scope, question, RecallOptions(reinforce=False)).context
    then = engine.recall(scope, question, RecallOptions(as_of=1, reinforce=False))
    assert "concert" in then.context
    assert "Matt" not in then.context


def test_a_dated_question_shows_only_the_turns_said_by_the_cut(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(scope, [say("We planted tomatoes in the garden.")])
    engine.remember(scope, [say("Today we planted roses.", minutes=60 * 24)])  # the next day
    question = f"What did we plant on {START + timedelta(days=1):%d %B %Y}?"
    assert "roses" in engine.recall(scope, question, RecallOptions(reinforce=False)).context
    for cut in (RecallOptions(as_of=1), RecallOptions(as_of_time=START + timedelta(hours=1))):
        then = engine.recall(scope, question, replace(cut, reinforce=False))
        assert "tomatoes" in then.context
        assert "roses" not in then.context


def test_a_fact_merged_later_does_not_hydrate_the_turn_it_absorbed(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(scope, [say("I have a dog named Oscar.")])
    engine.remember(scope, [say("The weather is nice.", minutes=1)])
    engine.remember(scope, [say("I have a dog named Oscar!!", minutes=2)])
    report = engine.maintain(scope)
    assert report.merged == 1  # the survivor now stands on turns 1 and 3
    now = engine.recall(scope, "What is my dog called?", RecallOptions(reinforce=False))
    assert "Oscar!!" in now.context
    then = engine.recall(scope, "What is my dog called?", RecallOptions(as_of=2, reinforce=False))
    assert "Oscar." in then.context
    assert "Oscar!!" not in then.context
