"""What every API model shares: strictness, identifier and text patterns, validators."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    WithJsonSchema,
    model_validator,
)

TierName = Literal["CoreAnchor", "ActiveContext", "EphemeralState"]
EventKindName = Literal[
    "turn", "add", "update", "invalidate", "reinforce", "prune", "elevate", "merge",
    "relink", "delete", "rollback", "purge", "import",
]  # fmt: skip
Reach = Literal["conversation", "agent"]
ID_PATTERN = r"^[A-Za-z0-9._:@-]{1,128}$"


def _storable(value: str) -> str:
    """Text every store can keep: valid UTF-8 (no lone surrogates) and no NUL."""
    if "\x00" in value:
        raise ValueError("text must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text must be valid Unicode (no lone surrogates)") from exc
    return value


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ISO_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _iso_text(value: Any) -> Any:
    """A time comes as ISO 8601 text (from Python, a datetime may be passed as it is).

    Numbers are refused: pydantic would read them as Unix seconds (milliseconds beyond
    2e10), so ``-1`` became 1969-12-31T23:59:59Z and a turn number a date in 1970.
    """
    if isinstance(value, datetime) or (isinstance(value, str) and _ISO_DATE.match(value)):
        return value
    raise ValueError("use an ISO 8601 date-time string such as 2024-03-01T12:00:00Z")


def _sane_time(value: datetime) -> datetime:
    """Aware UTC, from 1970-01-01T00:00:00Z to the year 8999 (a time without an offset is
    UTC). Before 1970 is a mistake, not a conversation; dates near the calendar's end
    overflow when relative expressions like "next year" are resolved against them."""
    if not 1970 <= value.year <= 8999:
        raise ValueError("the year must be between 1970 and 8999")
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if aware < EPOCH:
        raise ValueError("the time must be 1970-01-01T00:00:00Z or later")
    return aware.astimezone(UTC)


def _json_bool(value: Any) -> Any:
    """A query flag is spelled as JSON spells booleans: ``true`` or ``false``, nothing else
    (pydantic would also read yes/no/on/off/1/0)."""
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ValueError("use true or false")


def _whole(value: Any) -> Any:
    """JSON Schema's integers include 3.0; strict validation otherwise refuses it."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


YEAR_RANGE = r"^(19[7-9][0-9]|[2-8][0-9]{3})-"
WHOLE = BeforeValidator(_whole)
# Text with at least one non-blank character (the engine refuses blank text).
# Patterns keep the schema, the validators and the engine in agreement: text holds no NUL
# (PostgreSQL cannot store it), and "said" text has a character that is blank neither to
# Python's str.strip() nor to JSON Schema's \s.
_BLANK = r"\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
TEXT_PATTERN = r"^[^\x00]*$"
SAID_PATTERN = rf"^[^\x00]*[^\x00{_BLANK}][^\x00]*$"
Text = Annotated[str, Field(pattern=TEXT_PATTERN), AfterValidator(_storable)]
Said = Annotated[str, Field(pattern=SAID_PATTERN), AfterValidator(_storable)]
Timestamp = Annotated[
    datetime, Strict(False), BeforeValidator(_iso_text), AfterValidator(_sane_time),
    WithJsonSchema({"type": "string", "format": "date-time", "pattern": YEAR_RANGE}),
]  # fmt: skip
# A turn on a scope's clock: 0 is before the first message.
TurnNumber = Annotated[float, Field(ge=0)]
QueryFlag = Annotated[bool, BeforeValidator(_json_bool)]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Request(Model):
    """A request body, read as its schema says: no unknown fields, no explicit nulls (omit
    the field), no coercion (``false`` is not the number 0, ``"5"`` is not 5)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            nulls = sorted(str(k) for k, v in data.items() if v is None)
            if nulls:
                raise ValueError(f"`{nulls[0]}` must not be null; omit it instead")
        return data
