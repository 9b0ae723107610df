"""Decoding the protobuf bodies kubectl sends for built-in kinds into the JSON a real server would read.

Why: client-go's generated clients send built-in kinds as `application/vnd.kubernetes.protobuf` (kubectl's
`create namespace|deployment|configmap|secret|job|cronjob`, `run`, `drain`'s evictions) and never fall back to
JSON (client-go falls back on a 415 only for CBOR). The body is the Kubernetes envelope: the magic `k8s\\0`,
then a `runtime.Unknown` holding the apiVersion, kind and the object's own message. The messages are built
with the `protobuf` library from the field table (schema.py); the result is written as Go's encoding/json
writes the same Go value (omitempty, pointers, inlined members, Time as RFC 3339, Quantity and IntOrString as
their strings or numbers), so an object created from protobuf is stored as if kubectl had sent JSON.
"""

from __future__ import annotations

import base64
import functools
import json
from datetime import UTC, datetime
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message

from . import schema
from .errors import ApiError

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
PACKAGE = "k8s"
_F = descriptor_pb2.FieldDescriptorProto
_SCALAR_TYPES = {
    "string": _F.TYPE_STRING,
    "int32": _F.TYPE_INT32,
    "int64": _F.TYPE_INT64,
    "bool": _F.TYPE_BOOL,
    "bytes": _F.TYPE_BYTES,
}
# The messages mapped by hand (schema.SPECIAL kinds) and the envelope: (name, [(field, number, type)]).
_FIXED: dict[str, list[tuple[str, int, str]]] = {
    "time": [("seconds", 1, "int64"), ("nanos", 2, "int32")],
    "duration": [("duration", 1, "int64")],
    "quantity": [("string", 1, "string")],
    "intorstring": [("type", 1, "int64"), ("intVal", 2, "int32"), ("strVal", 3, "string")],
    "rawjson": [("raw", 1, "bytes")],
    "TypeMeta": [("apiVersion", 1, "string"), ("kind", 2, "string")],
    "Unknown": [("typeMeta", 1, "TypeMeta"), ("raw", 2, "bytes"), ("contentEncoding", 3, "string")],
}
_OMIT = object()


def _message_name(definition: str) -> str:
    special = schema.load().special.get(definition)
    if special is not None:
        return "time" if special == schema.MICROTIME else special
    return definition.replace(".", "_")


def _add_field(
    message: descriptor_pb2.DescriptorProto, name: str, number: int, kind: str, *, repeated: bool
) -> None:
    field = message.field.add(name=name, number=number)
    field.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
    if kind in _SCALAR_TYPES:
        field.type = _SCALAR_TYPES[kind]
    else:
        field.type = _F.TYPE_MESSAGE
        field.type_name = f".{PACKAGE}.{kind if kind in _FIXED else _message_name(kind)}"


def _file() -> descriptor_pb2.FileDescriptorProto:
    """One proto2 file with a message per definition of the table, plus the fixed ones."""
    file = descriptor_pb2.FileDescriptorProto(
        name="rehash_simulator/k8s.proto", package=PACKAGE, syntax="proto2"
    )
    for name, fields in _FIXED.items():
        message = file.message_type.add(name=name)
        for field_name, number, kind in fields:
            _add_field(message, field_name, number, kind, repeated=False)
    table = schema.load()
    for definition, members in table.definitions.items():
        message = file.message_type.add(name=_message_name(definition))
        for f in members:
            if f.map is None:
                _add_field(message, f.json, f.number, f.type, repeated=f.list)
                continue
            entry = message.nested_type.add(name=f"{f.json[0].upper()}{f.json[1:]}Entry")
            entry.options.map_entry = True
            _add_field(entry, "key", 1, "string", repeated=False)
            _add_field(entry, "value", 2, f.map, repeated=False)
            field = message.field.add(
                name=f.json, number=f.number, label=_F.LABEL_REPEATED, type=_F.TYPE_MESSAGE
            )
            field.type_name = f".{PACKAGE}.{message.name}.{entry.name}"
    return file


@functools.cache
def _pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file())
    return pool


def _message(name: str) -> Message:
    descriptor = _pool().FindMessageTypeByName(f"{PACKAGE}.{name}")
    message: Message = message_factory.GetMessageClass(descriptor)()
    return message


def is_protobuf(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == MEDIA_TYPE


def decode(body: bytes) -> dict[str, Any]:
    """The object of a protobuf request body, as JSON; 400 for a malformed body, 415 for a kind the
    simulator has no protobuf form of (as kube-apiserver answers for a custom resource)."""
    if not body.startswith(MAGIC):
        raise ApiError(400, "provided object does not have the expected protobuf prefix (k8s\\x00)")
    envelope = _message("Unknown")
    try:
        envelope.ParseFromString(body[len(MAGIC) :])
    except DecodeError as exc:
        raise ApiError(400, f"unable to decode the protobuf envelope: {exc}") from None
    api_version = str(envelope.typeMeta.apiVersion)
    kind = str(envelope.typeMeta.kind)
    definition = schema.load().definition(api_version, kind)
    if definition is None:
        raise ApiError(
            415,
            f'the body of the request was in an unknown format ("{kind}" in "{api_version}" has no protobuf '
            "form here) - accepted media types include: application/json, application/yaml",
            reason="UnsupportedMediaType",
        )
    message = _message(_message_name(definition))
    try:
        message.ParseFromString(envelope.raw)
    except DecodeError as exc:
        raise ApiError(400, f"unable to decode {kind} from protobuf: {exc}") from None
    return {"apiVersion": api_version, "kind": kind, **to_json(message, definition)}


def to_json(message: Message, definition: str) -> dict[str, Any]:
    """A message as Go's encoding/json writes the Go struct it was marshalled from."""
    out: dict[str, Any] = {}
    for f in schema.load().fields(definition):
        value = _field_json(message, f)
        if value is _OMIT:
            continue
        if f.inline:
            out.update(value)
        else:
            out[f.json] = value
    return out


def _field_json(message: Message, f: schema.Field) -> Any:
    if f.map is not None or f.list:
        values = getattr(message, f.json)
        if not len(values):
            return _OMIT if f.omit else None  # a nil map or slice: omitted, or null
        if f.map is not None:
            return {str(k): _value(v, f.map) for k, v in values.items()}
        return [_value(v, f.type) for v in values]
    present = message.HasField(f.json)
    if f.ptr and not present:
        return _OMIT if f.omit else None
    if f.type in _SCALAR_TYPES:
        value = _value(getattr(message, f.json), f.type)
        return _OMIT if f.omit and not f.ptr and not value else value
    value = _value(getattr(message, f.json), f.type)
    if f.omit == "zero" and not f.ptr and value == _value(_message(_message_name(f.type)), f.type):
        return _OMIT  # omitzero drops a zero struct (omitempty never drops a struct)
    return value


def _value(value: Any, kind: str) -> Any:
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind in _SCALAR_TYPES:
        return value
    special = schema.load().special.get(kind)
    if special is None:
        return to_json(value, kind)
    return _special(value, special)


def _special(value: Any, special: str) -> Any:
    if special in (schema.TIME, schema.MICROTIME):
        if not value.seconds and not value.nanos:
            return None  # the zero Time is written as null
        moment = datetime.fromtimestamp(value.seconds + value.nanos / 1e9, UTC)
        if special == schema.TIME:
            return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if special == schema.QUANTITY:
        return value.string
    if special == schema.INT_OR_STRING:
        return value.strVal if value.type == 1 else value.intVal
    if special == schema.DURATION:
        return go_duration(value.duration)
    raw = bytes(value.raw)
    return json.loads(raw) if raw else None


def go_duration(nanoseconds: int) -> str:
    """Go's time.Duration.String: `1h2m3s`, `1.5s`, `250ms`, `0s`."""
    if nanoseconds == 0:
        return "0s"
    sign, n = ("-", -nanoseconds) if nanoseconds < 0 else ("", nanoseconds)
    if n < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if n >= size:
                return f"{sign}{_decimal(n, size)}{unit}"
    hours, rest = divmod(n, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = f"{_decimal(rest, 1_000_000_000)}s"
    if hours or minutes:
        text = f"{minutes}m{text}"
    if hours:
        text = f"{hours}h{text}"
    return sign + text


def _decimal(value: int, unit: int) -> str:
    whole, fraction = divmod(value, unit)
    if not fraction:
        return str(whole)
    digits = str(fraction).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"
