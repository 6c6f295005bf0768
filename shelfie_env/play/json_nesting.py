"""How deeply a JSON text nests, read before parsing it.

``json.loads`` on a text nested tens of thousands of levels deep raises ``RecursionError`` from
inside the C decoder, which leaves CPython 3.11's recursion bookkeeping off for later compiles
in the same process. Readers of untrusted JSON check the depth first and never reach it.
"""

from __future__ import annotations

import re

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


def nesting_exceeds(text: str | bytes, limit: int) -> bool:
    """Whether arrays and objects in ``text`` nest more than ``limit`` levels (strings skipped)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub(b"", data)):
        if match.group() in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False
