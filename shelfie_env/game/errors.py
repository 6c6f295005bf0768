"""Exceptions raised by the rules engine."""

from __future__ import annotations


class IllegalActionError(ValueError):
    """An action id that the rules do not allow in the current position.

    ``action`` is the offending id and ``reason`` says why it is illegal.
    """

    def __init__(self, action: object, reason: str, name: str | None = None) -> None:
        self.action = action
        self.reason = reason
        label = f"{action!r} ({name})" if name else repr(action)
        super().__init__(f"illegal action {label}: {reason}")


class InvalidStateError(ValueError):
    """A state dict that is malformed or describes an impossible position.

    ``field`` names the offending key of the state dict (docs/rules.md).
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"invalid state field {field!r}: {message}")
