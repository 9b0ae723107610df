"""The settings table (reconcile/settings/) is the one source: what is generated from it is up to date,
and the table is consistent with itself (file defaults, flags, the compat vocabulary)."""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from reconcile.cli.commands import build_parser, flags_of
from reconcile.config.settings import load_schema
from reconcile.model.references import COMPAT_NAMES, COMPAT_RULES
from reconcile.settings.table import (
    ATTRIBUTES,
    BY_NAME,
    FLAGS,
    SECTION_OF,
    SETTING_GROUPS,
    TABLE,
    Setting,
    Settings,
    check_sections,
)

ROOT = Path(__file__).resolve().parent.parent


def test_the_generated_files_are_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen-config.py"), "--check"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr  # names the stale files: run make config


def test_every_attribute_of_each_settings_group_is_a_row_of_the_table() -> None:
    assert list(Settings.__dataclass_fields__) == list(SETTING_GROUPS)
    check_sections()
    fields = [f.name for group in SETTING_GROUPS.values() for f in dataclasses.fields(group)]
    assert [row.name for row in ATTRIBUTES] == fields
    assert all(row.section is SETTING_GROUPS[SECTION_OF[row.name]] for row in ATTRIBUTES)
    assert len(BY_NAME) == len(TABLE)


@pytest.mark.parametrize("row", [r for r in TABLE if r.attribute], ids=lambda r: r.name)
def test_each_default_as_the_file_writes_it_parses_to_the_default(row: Setting) -> None:
    if row.name == "shard":  # not in the file: resolved apart from `shards` (test_settings.py)
        return
    assert row.value.parse(row.file_default, False) == row.default


def test_each_keyed_row_is_in_the_packaged_schema_with_its_doc() -> None:
    schema = load_schema()
    for row in TABLE:
        if row.key is None:
            continue
        node = schema
        for token in row.key:
            node = node["properties"][token]
        assert node["description"] == row.doc
        assert node["$comment"] == row.group.title


def test_the_compat_vocabulary_is_the_peer_tables_and_the_schema_enum() -> None:
    assert frozenset(COMPAT_NAMES) == COMPAT_RULES
    assert load_schema()["properties"]["compat"]["items"]["enum"] == list(COMPAT_NAMES)


def test_flags_of_returns_exactly_the_table_flags_given() -> None:
    args = build_parser().parse_args(
        ["run", "-n", "a", "-vv", "--dry-run", "--shard", "0/2", "--config", "c"]
    )
    assert flags_of(args) == {"namespaces": ["a"], "verbosity": 2, "dry_run": "client", "shard": "0/2"}
    assert flags_of(argparse.Namespace(command="run")) == {}


def test_every_flag_row_is_a_flag_of_run() -> None:
    parser = build_parser()
    run = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["run"]
    dests = {action.dest for action in run._actions}
    assert {row.name for row in FLAGS} <= dests
