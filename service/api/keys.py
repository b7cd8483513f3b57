"""The keys: optional API keys and a separate admin key, as 'Authorization: Bearer'.

Which paths need which key, where keys come from (settings, key files, re-read on SIGHUP) and
how the OpenAPI document declares them. The check itself runs on every request in
service/api/edge.py: health and readiness are always open, and so are the explorer's page and
files (they hold no data; the page asks for a key and sends it with its API calls); /metrics is
open unless configured otherwise. Keys are compared in constant time (hmac.compare_digest),
against every configured key in turn.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from pydantic import SecretStr

from service.config import Settings

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
# The OpenAPI security scheme of 'Authorization: Bearer <key>'.
SCHEME = "bearer"
METRICS_PATH = "/metrics"
ADMIN_PREFIX = "/v1/admin"


LOGGER = logging.getLogger("service.access")


class NoUsableKey(ValueError):
    """A configured key source yields no key: starting would leave the service open."""


def read_keys(path: Path) -> list[str]:
    """Keys from a file, one a line; blank lines and lines starting with '#' are skipped.

    '#' starts a comment only at the start of a line: inside a key it is part of the key.
    """
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise NoUsableKey(f"key file {path} cannot be read: {type(error).__name__}") from None
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _secrets(
    what: str, values: list[SecretStr] | SecretStr | None, path: Path | None
) -> tuple[bytes, ...]:
    """The keys of one source (inline values plus a file); NoUsableKey when it is configured
    but yields none, so an empty key file or an empty key never starts an open server."""
    given = values if isinstance(values, list) else [values] if values is not None else []
    keys = [value.get_secret_value().strip() for value in given]
    if path is not None:
        keys += read_keys(path)
    usable = tuple(key.encode() for key in keys if key)
    if (given or path is not None) and not usable:
        raise NoUsableKey(f"the {what} are configured but none is usable (empty key or file)")
    if len(usable) < len(keys):
        raise NoUsableKey(f"an empty key is among the {what}")
    return usable


class KeyRing:
    """The accepted API keys and admin keys (either may be empty), re-read on SIGHUP."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.api, self.admin = self._read()
        LOGGER.info("%d API key(s), %d admin key(s)", len(self.api), len(self.admin))

    @classmethod
    def from_settings(cls, settings: Settings) -> KeyRing:
        """Keys from the settings and the key files they name; NoUsableKey if a source is empty."""
        return cls(settings)

    def reload(self) -> None:
        """Re-read the key files (rotation without a restart); a source that has become
        unusable keeps its old keys, logged, rather than opening the service."""
        try:
            api, admin = self._read()
        except NoUsableKey as error:
            LOGGER.error("keys not reloaded, the old ones stay: %s", error)
            return
        self.api, self.admin = api, admin
        LOGGER.info("reloaded: %d API key(s), %d admin key(s)", len(api), len(admin))

    def _read(self) -> tuple[tuple[bytes, ...], tuple[bytes, ...]]:
        settings = self.settings
        return (
            _secrets("API keys", settings.api_keys, settings.api_keys_file),
            _secrets("admin keys", settings.admin_key, settings.admin_key_file),
        )


def document_security(app: FastAPI, keys: KeyRing, metrics_require_key: bool) -> None:
    """Declare the Bearer scheme in the OpenAPI document, on the operations that need a key."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        # FastAPI caches the document and rebuilds it when routes are added (included routers
        # are added lazily); marking it again each time is idempotent and cheap.
        schema = build()
        if keys.api or keys.admin:
            schemes = schema.setdefault("components", {}).setdefault("securitySchemes", {})
            schemes[SCHEME] = {"type": "http", "scheme": "bearer"}
            for path, operations in schema.get("paths", {}).items():
                if _needs_key(path, keys, metrics_require_key):
                    for operation in operations.values():
                        operation["security"] = [{SCHEME: []}]
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _needs_key(path: str, keys: KeyRing, metrics_require_key: bool) -> bool:
    if path in OPEN_PATHS or (path == METRICS_PATH and not metrics_require_key):
        return False
    return path.startswith(ADMIN_PREFIX) or bool(keys.api)
