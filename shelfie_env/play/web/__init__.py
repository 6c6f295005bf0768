"""Play in the browser: a local web table (Starlette + SQLite) against bots or friends.

``create_app(db_path)`` builds the ASGI app; ``shelfie serve`` runs it with uvicorn.
"""

from __future__ import annotations

from typing import Any


def create_app(*args: Any, **kwargs: Any) -> Any:
    """Build the ASGI app (see :func:`shelfie_env.play.web.app.create_app`)."""
    from shelfie_env.play.web.app import create_app as _create_app

    return _create_app(*args, **kwargs)


__all__ = ["create_app"]
