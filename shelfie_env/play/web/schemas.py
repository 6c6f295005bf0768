"""The JSON API's request bodies, as pydantic models that the routes parse bodies with.

Fields are strict: an integer field takes a JSON integer within ±2**31 (not a
bool, a float or a string), ``null`` counts as leaving a field out, and a field
the body does not know is refused (the hint body ignores the others). Whatever
does not fit becomes a :class:`~shelfie_env.play.web.refusals.BadRequest`
whose ``code`` names the field (``missing_action``, ``bad_expect``, ``bad_seats``, ...).
Checks that need the game (the seat's range, its token, the bots offered) are
the service's.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from shelfie_env.game.engine import MAX_PLAYERS
from shelfie_env.play.web.refusals import BadRequest

MAX_NAME = 24
"""The longest seat name, in characters."""
INT_LIMIT = 2**31
"""The largest magnitude of an integer field."""
MAX_HINTS = 10
"""The most moves a hint lists."""
ITEM_NAMES = {"seats": "seat"}
"""How a message names an entry of a list field (``seat 2``)."""
PERSON_KEY = re.compile(r"^[A-Za-z0-9_-]{16,128}$")
"""A browser's person key: 16 to 128 URL-safe characters (the page makes 32 random ones)."""

B = TypeVar("B", bound="Body")


def _problem(code: str, message: str) -> PydanticCustomError:
    """A validation error with our own ``code`` (the message goes through as it is)."""
    return PydanticCustomError(code, "{message}", {"message": message})


def _integer(value: object, info: ValidationInfo) -> int:
    """A JSON integer within ±:data:`INT_LIMIT`."""
    name = info.field_name
    if isinstance(value, bool) or not isinstance(value, int):
        raise _problem(f"bad_{name}", f"{name!r} must be an integer, got {value!r}"[:200])
    if not -INT_LIMIT <= value <= INT_LIMIT:
        raise _problem(f"bad_{name}", f"{name!r} is out of range")
    return value


def _count(value: object, info: ValidationInfo) -> int:
    """An integer that is not negative."""
    number = _integer(value, info)
    if number < 0:
        raise _problem(f"bad_{info.field_name}", f"{info.field_name!r} must be >= 0")
    return number


def _hint_count(value: object, info: ValidationInfo) -> int:
    """How many moves a hint lists: 1 to :data:`MAX_HINTS`."""
    number = _integer(value, info)
    if not 1 <= number <= MAX_HINTS:
        raise _problem("bad_request", f"'k' must be 1..{MAX_HINTS}")
    return number


def _seat_kind(value: object, info: ValidationInfo) -> str:
    """``human`` or ``bot``."""
    if value == "human" or value == "bot":
        return str(value)
    raise _problem("bad_seats", f"'type' must be 'human' or 'bot', got {value!r}")


def _seat_name(value: object, info: ValidationInfo) -> str:
    """A seat name: its runs of white space made one space, at most :data:`MAX_NAME` printable characters."""
    if not isinstance(value, str):
        raise _problem("bad_name", f"a seat name must be a string, got {type(value).__name__}")
    name = " ".join(value.split())
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        raise _problem("bad_name", "a seat name may not contain control characters")
    if len(name) > MAX_NAME:
        raise _problem("bad_name", f"a seat name may have at most {MAX_NAME} characters, got {len(name)}")
    return name


def _person_key(value: object, info: ValidationInfo) -> str:
    """A person key (:data:`PERSON_KEY`): the secret a browser keeps to be the same player at every table."""
    if isinstance(value, str) and PERSON_KEY.match(value):
        return value
    raise _problem("bad_person", "'person' must be a string of 16 to 128 letters, digits, '-' or '_'")


def _seat_list(value: object) -> object:
    """A list of 1 to :data:`MAX_PLAYERS` entries (each then parsed as a :class:`SeatSpec`)."""
    if isinstance(value, list) and 1 <= len(value) <= MAX_PLAYERS:
        return value
    raise _problem("bad_seats", f"'seats' must be a list of 1 to {MAX_PLAYERS} seats")


Integer = Annotated[int, PlainValidator(_integer)]
Count = Annotated[int, PlainValidator(_count)]
OptionalCount = Annotated[int | None, PlainValidator(_count)]
HintCount = Annotated[int, PlainValidator(_hint_count)]
SeatKind = Annotated[Literal["human", "bot"], PlainValidator(_seat_kind)]
SeatName = Annotated[str | None, PlainValidator(_seat_name)]
PersonKey = Annotated[str | None, PlainValidator(_person_key)]
Token = Any
"""A seat's secret as sent: any JSON value (only the seat's own token, a string, holds it)."""


class Body(BaseModel):
    """A JSON object body; ``example`` shows its shape in the message refusing anything else."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    example: ClassVar[str] = "{}"

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_absent(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data


class SeatSpec(Body):
    """One seat of a new table: a person (``name``, and ``person``: their browser's person key, which
    rates their games) or a bot (``bot``, and a ``name`` if wished)."""

    type: SeatKind = Field(default=None, validate_default=True)
    name: SeatName = None
    bot: Any = None
    """The bot's name; the service checks it against the bots it offers."""
    person: PersonKey = None


class TableBody(Body):
    """``POST /api/games``: the seats of a new table."""

    example = '{"seats": [...]}'
    seats: Annotated[tuple[SeatSpec, ...], BeforeValidator(_seat_list)] = Field(
        default=None, validate_default=True
    )


class MoveBody(Body):
    """``POST /api/games/{id}/actions``: a seat's action, bound to the position after ``expect`` moves;
    ``since`` chooses the moves the answer lists."""

    example = '{"seat": 0, "token": "...", "action": 0, "expect": 0}'
    seat: Count
    token: Token = None
    action: Integer
    expect: Count
    since: OptionalCount = None
    person: PersonKey = None
    """The player's person key: what holds a seat they joined (its token no longer does)."""


class ResignBody(Body):
    """``POST /api/games/{id}/resign``: the seat that resigns."""

    example = '{"seat": 0, "token": "..."}'
    seat: Count
    token: Token = None
    since: OptionalCount = None
    person: PersonKey = None


class HintBody(Body):
    """``POST /api/games/{id}/hint``: the seat on turn asking for its ``k`` best moves."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    example = '{"seat": 0, "token": "..."}'
    seat: Count
    token: Token = None
    k: HintCount = 3
    person: PersonKey = None


class RematchBody(Body):
    """``POST /api/games/{id}/rematch``: one of the game's people (a table of bots only needs neither field)."""

    example = '{"seat": 0, "token": "..."}'
    seat: OptionalCount = None
    token: Token = None
    person: PersonKey = None
    """The asker's person key: it opens the rematch of a seat they joined, and takes their seat there."""


class JoinBody(Body):
    """``POST /api/games/{id}/join``: the person taking a seat of a game in play (seat, its token, their key)."""

    example = '{"seat": 1, "token": "...", "person": "..."}'
    seat: Count
    token: Token = None
    person: PersonKey = Field(default=None, validate_default=True)


class PersonBody(Body):
    """``POST /api/person``: whose ratings and games to show (their person key)."""

    example = '{"person": "..."}'
    person: PersonKey = Field(default=None, validate_default=True)


def parse(model: type[B], raw: object) -> B:
    """``raw`` (a decoded JSON body, or already a ``model``) as ``model``; :class:`BadRequest` names
    the first thing wrong with it."""
    if isinstance(raw, model):
        return raw
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise refusal(model, exc.errors()) from None


def refusal(model: type[Body], errors: Sequence[ErrorDetails]) -> BadRequest:
    """The refusal of a body with these validation ``errors``: its unknown fields if it has any,
    else its first error."""
    unknown = [e["loc"] for e in errors if e["type"] == "extra_forbidden"]
    if unknown:
        return _unknown_fields(unknown)
    error = errors[0]
    loc, kind = error["loc"], error["type"]
    if kind == "model_type" and not loc:
        return BadRequest(f"the body must be a JSON object like {model.example}")
    if kind == "model_type":
        return BadRequest(f"{_where(loc)}: must be an object", code=f"bad_{loc[0]}")
    if kind == "missing":
        return BadRequest(f"missing field {loc[-1]!r}", code=f"missing_{loc[-1]}")
    return BadRequest(_within(loc[:-1]) + error["msg"], code=kind)


def _unknown_fields(locs: list[tuple[int | str, ...]]) -> BadRequest:
    """The refusal of the unknown fields of one object: the body's own, else the first entry's."""
    parent = min((loc[:-1] for loc in locs), key=len)
    names = ", ".join(sorted(str(loc[-1]) for loc in locs if loc[:-1] == parent))
    if not parent:
        return BadRequest(f"unknown field(s): {names}")
    return BadRequest(f"{_where(parent)}: unknown field(s) {names}", code=f"bad_{parent[0]}")


def _where(loc: tuple[int | str, ...]) -> str:
    """``("seats", 2)`` as ``seat 2``."""
    field, index = loc[0], loc[1]
    return f"{ITEM_NAMES.get(str(field), str(field))} {index}"


def _within(parent: tuple[int | str, ...]) -> str:
    """The prefix naming the list entry a field error is in (empty for the body's own fields)."""
    return f"{_where(parent)}: " if len(parent) >= 2 else ""


__all__ = [
    "MAX_NAME",
    "Body",
    "HintBody",
    "JoinBody",
    "MoveBody",
    "PersonBody",
    "RematchBody",
    "ResignBody",
    "SeatSpec",
    "TableBody",
    "parse",
]
