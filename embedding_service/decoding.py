"""JSON answers -> the dataclasses of models.py, and vectors <-> base64 float32.

`decode` reads a dataclass's own type hints, so a model is declared once (its fields) and never
parsed by hand: nested dataclasses, lists, tuples, dicts and optional fields are followed, keys
the client does not know are ignored (a newer server may add some), and a field whose JSON key
is not a Python name says so in its metadata (`field(metadata={"json": "from"})`).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import types
import typing
from collections.abc import Sequence
from typing import Any, TypeVar, get_args, get_origin

import numpy as np

T = TypeVar("T")

# Little-endian float32: the wire format of every `vector_b64`.
FLOAT32 = np.dtype("<f4")


def encode_vector(vector: Sequence[float] | np.ndarray) -> str:
    """A 1-D vector as base64 of its little-endian float32 bytes."""
    array = np.ascontiguousarray(vector, dtype=FLOAT32)
    if array.ndim != 1:
        raise ValueError(f"a vector must be one-dimensional, not of shape {array.shape}")
    return base64.b64encode(array.tobytes()).decode("ascii")


def decode_vector(text: str) -> np.ndarray:
    """The float32 vector a `vector_b64` holds (native byte order, writable)."""
    return np.frombuffer(base64.b64decode(text), dtype=FLOAT32).astype(np.float32)


def decode(cls: type[T], data: Any) -> T:
    """An instance of the dataclass `cls` from its JSON object."""
    return typing.cast(T, _value(cls, data))


def decode_list(cls: type[T], items: Any) -> list[T]:
    """A list of `cls` from a JSON array."""
    return [decode(cls, item) for item in items]


@functools.cache
def _fields(cls: type) -> list[tuple[str, str, Any, bool]]:
    """(attribute, JSON key, type, required) of each field of a dataclass."""
    hints = typing.get_type_hints(cls)
    return [
        (
            field.name,
            field.metadata.get("json", field.name),
            hints[field.name],
            field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING,
        )
        for field in dataclasses.fields(cls)
        if field.init
    ]


def _value(hint: Any, data: Any) -> Any:
    if data is None:
        return None
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _dataclass(hint, data)
    origin = get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _union(get_args(hint), data)
    if origin is list:
        [item] = get_args(hint)
        return [_value(item, value) for value in data]
    if origin is tuple:
        return tuple(data)
    if origin is dict:
        _, item = get_args(hint)
        return {key: _value(item, value) for key, value in data.items()}
    return data


def _dataclass(cls: type, data: dict[str, Any]) -> Any:
    values = {name: _value(hint, data[key]) for name, key, hint, _ in _fields(cls) if key in data}
    return cls(**values)


def _union(options: tuple[Any, ...], data: Any) -> Any:
    """The first dataclass option whose required keys the object has, else the value as is."""
    for option in options:
        if option is type(None):
            continue
        if dataclasses.is_dataclass(option) and isinstance(option, type):
            if isinstance(data, dict) and _has_required(option, data):
                return _dataclass(option, data)
            continue
        return _value(option, data)
    return data


def _has_required(cls: type, data: dict[str, Any]) -> bool:
    return all(key in data for _, key, _, required in _fields(cls) if required)
