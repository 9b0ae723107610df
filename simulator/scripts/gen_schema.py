"""Write rehash_simulator/k8s_schema.json: the fields of every kind the simulator serves, from Kubernetes' own
definitions (k8s.io/api and k8s.io/apimachinery, Apache-2.0).

Why: kubectl sends built-in kinds as protobuf, validates manifests through the server's OpenAPI documents and
asks the server to reject unknown fields (`fieldValidation=Strict`). All three need each field's protobuf
number and type (from the modules' generated.proto) and its JSON name, `omitempty`, pointer-ness, inlining and
patch strategy (from the Go struct tags of types.go). The simulator reads only the JSON this writes.

    python simulator/scripts/gen_schema.py [--modules DIR]   # DIR: a Go module cache holding k8s.io/api@vX

The version is the one pinned in rehash_simulator/versions.py (the bundled kubectl's minor); the modules come
from the Go module cache the control-plane build fills (`go mod download k8s.io/api@v0.<minor>.<patch>`).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rehash_simulator.versions import KUBERNETES_VERSION  # noqa: E402

OUT = HERE.parent / "rehash_simulator" / "k8s_schema.json"
# (package directory in its module, API version) of every kind the simulator serves, and those roots.
PACKAGES = {
    "api/core/v1": "v1",
    "api/apps/v1": "apps/v1",
    "api/batch/v1": "batch/v1",
    "api/policy/v1": "policy/v1",
    "api/scheduling/v1alpha3": "",
    "apimachinery/pkg/apis/meta/v1": "meta.k8s.io/v1",
    "apimachinery/pkg/api/resource": "",
    "apimachinery/pkg/util/intstr": "",
    "apimachinery/pkg/runtime": "",
}
ROOTS = {
    "v1": ["Namespace", "ConfigMap", "Secret", "Event", "Pod"],
    "apps/v1": ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"],
    "batch/v1": ["Job", "CronJob"],
    "policy/v1": ["PodDisruptionBudget", "Eviction"],
    "meta.k8s.io/v1": ["DeleteOptions"],
}
_PROTO_FIELD = re.compile(r"^\s*(optional|repeated)\s+(\S+)\s+(\w+)\s*=\s*(\d+)\s*;")
_PROTO_MAP = re.compile(r"^\s*map<\s*(\w+)\s*,\s*(\S+)\s*>\s+(\w+)\s*=\s*(\d+)\s*;")
_GO_FIELD = re.compile(r"^\s*(?:(\w+)\s+)?(\S+)\s+`([^`]*)`")
_TAG = re.compile(r'(\w+):"([^"]*)"')


@dataclass
class ProtoField:
    number: int
    name: str
    type: str
    repeated: bool = False
    map_value: str | None = None


@dataclass
class GoField:
    json: str
    omit: str
    pointer: bool
    inline: bool
    patch_strategy: str = ""
    merge_key: str = ""


@dataclass
class Message:
    full: str
    fields: list[ProtoField] = field(default_factory=list)


def definition_name(proto_name: str) -> str:
    """`.k8s.io.api.core.v1.Pod` -> `io.k8s.api.core.v1.Pod` (the OpenAPI definition name)."""
    return "io.k8s." + proto_name.lstrip(".").removeprefix("k8s.io.")


def read_proto(path: Path) -> dict[str, Message]:
    package = ""
    messages: dict[str, Message] = {}
    current: Message | None = None
    for raw in path.read_text().splitlines():
        line = raw.split("//", 1)[0]
        if m := re.match(r"^package\s+([\w.]+);", line):
            package = m[1]
        elif m := re.match(r"^message\s+(\w+)\s*{", line):
            current = Message(definition_name(f"{package}.{m[1]}"))
            messages[current.full] = current
        elif line.startswith("}"):
            current = None
        elif current is not None and (m := _PROTO_MAP.match(line)):
            value = m[2] if "." not in m[2] else definition_name(m[2])
            current.fields.append(ProtoField(int(m[4]), m[3], m[1], True, value))
        elif current is not None and (m := _PROTO_FIELD.match(line)):
            kind = m[2]
            if "." in kind:
                kind = definition_name(kind)
            elif kind[0].isupper():
                kind = definition_name(f"{package}.{kind}")
            current.fields.append(ProtoField(int(m[4]), m[3], kind, m[1] == "repeated"))
    return messages


def read_go_structs(directory: Path) -> dict[str, dict[int, GoField]]:
    """{struct: {protobuf number: its Go facts}} from every non-test Go file of a package."""
    structs: dict[str, dict[int, GoField]] = {}
    for path in sorted(directory.glob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        current: dict[int, GoField] | None = None
        for line in path.read_text().splitlines():
            if m := re.match(r"^type (\w+) struct {", line):
                current = structs.setdefault(m[1], {})
            elif line.startswith("}"):
                current = None
            elif current is not None and (m := _GO_FIELD.match(line)):
                tags = dict(_TAG.findall(m[3]))
                proto = tags.get("protobuf", "")
                if not proto or proto == "-":
                    continue
                number = int(proto.split(",")[1])
                json_parts = tags.get("json", "").split(",")
                embedded = m[1] is None
                options = set(json_parts[1:])
                current[number] = GoField(
                    json=json_parts[0],
                    omit="zero" if "omitzero" in options else "empty" if "omitempty" in options else "",
                    pointer=m[2].startswith("*"),
                    inline="inline" in options or (embedded and not json_parts[0]),
                    patch_strategy=tags.get("patchStrategy", ""),
                    merge_key=tags.get("patchMergeKey", ""),
                )
    return structs


# Message types the simulator maps by hand (rehash_simulator/protobuf.py): their fields are not listed.
SPECIAL = {
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "microtime",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Duration": "duration",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": "rawjson",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "rawjson",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "intorstring",
}


def field_entry(proto: ProtoField, go: GoField | None, owner: str) -> dict[str, object]:
    if go is None:
        raise SystemExit(f"{owner}: protobuf field {proto.number} ({proto.name}) has no Go struct field")
    entry: dict[str, object] = {"n": proto.number, "json": go.json or proto.name, "type": proto.type}
    if proto.map_value is not None:
        entry["map"] = proto.map_value
    elif proto.repeated:
        entry["list"] = True
    flags = {
        "ptr": go.pointer,
        "omit": go.omit,
        "inline": go.inline,
        "patchStrategy": go.patch_strategy,
        "mergeKey": go.merge_key,
    }
    entry.update({k: v for k, v in flags.items() if v})
    return entry


def closure(messages: dict[str, Message], roots: list[str]) -> list[str]:
    seen: list[str] = []
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name in SPECIAL:
            continue
        seen.append(name)
        for f in messages[name].fields:
            for kind in (f.type, f.map_value):
                if kind and kind.startswith("io.k8s."):
                    if kind not in messages and kind not in SPECIAL:
                        raise SystemExit(f"{name}.{f.name}: {kind} is in no package of PACKAGES")
                    todo.append(kind)
    return sorted(seen)


def module_dirs(cache: Path) -> dict[str, Path]:
    version = f"v0.{KUBERNETES_VERSION.split('.', 1)[1]}"
    dirs = {name: cache / "k8s.io" / f"{name}@{version}" for name in ("api", "apimachinery")}
    for directory in dirs.values():
        if not directory.is_dir():
            raise SystemExit(f"{directory} is missing: go mod download k8s.io/{directory.name}")
    return dirs


def build(cache: Path) -> dict[str, object]:
    dirs = module_dirs(cache)
    messages: dict[str, Message] = {}
    go: dict[str, dict[str, dict[int, GoField]]] = {}
    packages: dict[str, str] = {}
    for package in PACKAGES:
        module, rest = package.split("/", 1)
        directory = dirs[module] / rest
        found = read_proto(directory / "generated.proto")
        messages.update(found)
        prefix = definition_name(f".k8s.io.{module}.{rest.replace('/', '.')}")
        packages[prefix] = package
        go[prefix] = read_go_structs(directory)
    roots = [
        definition_name(f".k8s.io.{pkg.replace('/', '.')}.{kind}")
        for pkg, api in PACKAGES.items()
        for kind in ROOTS.get(api, [])
    ]
    definitions: dict[str, object] = {}
    for name in closure(messages, roots):
        prefix, _, struct = name.rpartition(".")
        facts = go[prefix].get(struct, {})
        definitions[name] = [field_entry(f, facts.get(f.number), name) for f in messages[name].fields]
    kinds = {
        f"{api}/{kind}" if api else kind: definition_name(f".k8s.io.{pkg.replace('/', '.')}.{kind}")
        for pkg, api in PACKAGES.items()
        for kind in ROOTS.get(api, [])
    }
    return {
        "source": f"k8s.io/api and k8s.io/apimachinery v0.{KUBERNETES_VERSION.split('.', 1)[1]} "
        "(Apache-2.0): generated.proto field numbers and types, types.go JSON tags",
        "special": SPECIAL,
        "kinds": kinds,
        "definitions": definitions,
    }


def default_cache() -> Path:
    out = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=Path, help="Go module cache (default: go env GOMODCACHE)")
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed file differs")
    args = parser.parse_args()
    text = json.dumps(build(args.modules or default_cache()), indent=0, sort_keys=True) + "\n"
    if args.check:
        sys.exit(0 if OUT.read_text() == text else 1)
    OUT.write_text(text)


if __name__ == "__main__":
    main()
