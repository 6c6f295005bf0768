"""How deeply a JSON text nests, read before parsing it: :func:`shelfie_env.jsonfile.nesting_exceeds`,
here for the readers of request bodies and replays."""

from __future__ import annotations

from shelfie_env.jsonfile import nesting_exceeds

__all__ = ["nesting_exceeds"]
