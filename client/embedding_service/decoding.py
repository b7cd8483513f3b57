"""JSON answers -> the dataclasses of models.py, and vectors <-> base64 float32.

`decode` reads a dataclass's own type hints, so a model is declared once (its fields) and never
parsed by hand: nested dataclasses, lists, tuples, dicts and optional fields are followed, keys
the client does not know are ignored (a newer server may add some), and a field whose JSON key
is not a Python name says so in its metadata (`field(metadata={"json": "from"})`).
"""

from __future__ import annotations

import base64
import dataclasses
import types
import typing
from collections.abc import Callable, Sequence
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
    return typing.cast(T, _decoder(cls)(data))


def decode_list(cls: type[T], items: Any) -> list[T]:
    """A list of `cls` from a JSON array."""
    one = _decoder(cls)
    return [one(item) for item in items]


def _same(value: Any) -> Any:
    return value


# Built once per type: a model's decoder is a few closures, not a walk over its type hints.
_DECODERS: dict[Any, Callable[[Any], Any]] = {}


def _decoder(hint: Any) -> Callable[[Any], Any]:
    """The function that turns JSON into a value of type `hint`."""
    if hint not in _DECODERS:
        _DECODERS[hint] = _build_decoder(hint)
    return _DECODERS[hint]


def _build_decoder(hint: Any) -> Callable[[Any], Any]:
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _dataclass_decoder(hint)
    origin = get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(get_args(hint))
    if origin is list:
        item = _decoder(get_args(hint)[0])
        return _same if item is _same else lambda data: [item(value) for value in data]
    if origin is tuple:
        return tuple
    if origin is dict:
        value = _decoder(get_args(hint)[1])
        return _same if value is _same else lambda data: {k: value(v) for k, v in data.items()}
    return _same


def _dataclass_decoder(cls: type) -> Callable[[Any], Any]:
    hints = typing.get_type_hints(cls)
    fields = [
        (field.name, field.metadata.get("json", field.name), _decoder(hints[field.name]))
        for field in dataclasses.fields(cls)
        if field.init
    ]

    def decoded(data: dict[str, Any]) -> Any:
        return cls(**{name: decode(data[key]) for name, key, decode in fields if key in data})

    return decoded


def _union_decoder(options: tuple[Any, ...]) -> Callable[[Any], Any]:
    """None stays None; otherwise the first dataclass option whose required keys the object
    has, or the first other option."""
    choices = [option for option in options if option is not type(None)]
    classes = [
        option
        for option in choices
        if isinstance(option, type) and dataclasses.is_dataclass(option)
    ]
    if not classes:
        first = _decoder(choices[0])
        if all(_decoder(option) is _same for option in choices):
            return _same  # numbers and strings (and None) come as they are
        return lambda data: None if data is None else first(data)
    required = [(_decoder(cls), _required_keys(cls)) for cls in classes]

    def decoded(data: Any) -> Any:
        if isinstance(data, dict):
            for decode_as, keys in required:
                if keys <= data.keys():
                    return decode_as(data)
        return data

    return decoded


def _required_keys(cls: type) -> set[str]:
    return {
        field.metadata.get("json", field.name)
        for field in dataclasses.fields(cls)
        if field.init
        and field.default is dataclasses.MISSING
        and field.default_factory is dataclasses.MISSING
    }
