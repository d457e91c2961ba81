"""How the messages of one call are dated: ``nmafc.core.turns.dated``."""

from __future__ import annotations

from datetime import UTC, datetime

from nmafc.core.turns import Message, dated

MAY_8 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
MAY_9 = datetime(2023, 5, 9, 8, 0, tzinfo=UTC)
CALL = datetime(2024, 1, 1, tzinfo=UTC)


def times(messages: list[Message]) -> list[datetime | None]:
    return [m.occurred_at for m in messages]


def test_an_undated_message_takes_the_time_of_the_message_before_it() -> None:
    said = dated(
        [Message("a", occurred_at=MAY_8), Message("b"), Message("c", occurred_at=MAY_9),
         Message("d"), Message("e")],
        CALL,
    )  # fmt: skip
    assert times(said) == [MAY_8, MAY_8, MAY_9, MAY_9, MAY_9]


def test_messages_before_any_dated_one_take_the_call_time() -> None:
    said = dated([Message("a"), Message("b"), Message("c", occurred_at=MAY_8)], CALL)
    assert times(said) == [CALL, CALL, MAY_8]


def test_without_a_call_time_the_leading_undated_messages_stay_undated() -> None:
    said = dated([Message("a"), Message("b", occurred_at=MAY_8), Message("c")], None)
    assert times(said) == [None, MAY_8, MAY_8]


def test_dating_keeps_everything_else_of_a_message() -> None:
    original = Message("c", role="assistant", speaker="Bot", captions=("a cat",))
    (said,) = dated([original], CALL)
    assert (said.content, said.role, said.speaker, said.captions) == (
        "c", "assistant", "Bot", ("a cat",),
    )  # fmt: skip
    assert original.occurred_at is None  # messages are values: the input is unchanged
