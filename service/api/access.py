"""Access control: optional API keys and a separate admin key, as 'Authorization: Bearer'.

Health and readiness are always open, and so are the explorer's page and files (they hold no
data; the page asks for a key and sends it with its API calls); /metrics is open unless
configured otherwise. Keys are compared in constant time (hmac.compare_digest), against every
configured key in turn.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr
from starlette.types import ASGIApp, Receive, Scope, Send

from service.api.admission import refuse
from service.config import Settings
from service.errors import Unauthorized
from service.explorer import is_page_path

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
METRICS_PATH = "/metrics"
ADMIN_PREFIX = "/v1/admin"


def read_keys(path: Path) -> list[str]:
    """Keys from a file, one a line; blank lines and '#' comments are skipped."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text("utf-8").splitlines())
    return [line for line in lines if line]


def _secrets(values: list[SecretStr] | SecretStr | None, path: Path | None) -> tuple[bytes, ...]:
    given = values if isinstance(values, list) else [values] if values is not None else []
    keys = [value.get_secret_value() for value in given]
    if path is not None:
        keys += read_keys(path)
    return tuple(key.encode() for key in keys if key)


@dataclass(frozen=True)
class KeyRing:
    """The accepted API keys and admin keys (either may be empty)."""

    api: tuple[bytes, ...] = ()
    admin: tuple[bytes, ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> KeyRing:
        """Keys from the settings and the key files they name."""
        return cls(
            api=_secrets(settings.api_keys, settings.api_keys_file),
            admin=_secrets(settings.admin_key, settings.admin_key_file),
        )


def matches(presented: bytes, keys: tuple[bytes, ...]) -> bool:
    """Whether `presented` is one of `keys`; every key is compared, each in constant time."""
    found = False
    for key in keys:
        found |= hmac.compare_digest(presented, key)
    return found


def bearer_token(scope: Scope) -> bytes | None:
    """The token of an 'Authorization: Bearer <token>' header, if there is one."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.partition(b" ")
            if scheme.lower() == b"bearer" and token.strip():
                return token.strip()
            return b""
    return None


class AccessMiddleware:
    """401 with a WWW-Authenticate challenge for a request without a valid key."""

    def __init__(self, app: ASGIApp, keys: KeyRing, metrics_require_key: bool) -> None:
        self.app = app
        self.keys = keys
        self.metrics_require_key = metrics_require_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        admin = scope["path"].startswith(ADMIN_PREFIX)
        needed = self.required_keys(scope["path"], admin)
        if needed:
            presented = bearer_token(scope)
            if presented is None or not matches(presented, needed):
                await refuse(Unauthorized(presented is not None, admin), scope, receive, send)
                return
        await self.app(scope, receive, send)

    def required_keys(self, path: str, admin: bool) -> tuple[bytes, ...]:
        """The keys that open `path`; empty when it is open."""
        if path in OPEN_PATHS or is_page_path(path):
            return ()
        if path == METRICS_PATH and not self.metrics_require_key:
            return ()
        if admin:
            # Without an admin key the admin routes are not mounted: the answer is a 404.
            return self.keys.admin
        if not self.keys.api:
            return ()
        return self.keys.api + self.keys.admin
