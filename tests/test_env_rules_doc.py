"""docs/configuration.md's environment variable rules are the loader's: each rule's examples, read from the
page itself, are fed to the loader (and, for what it refuses, to the CLI, which must exit 2), so the page
cannot promise spellings the loader refuses or miss ones it takes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from reconcile.config.settings import load_settings
from reconcile.errors import ConfigError
from reconcile.settings.rows import Setting
from reconcile.settings.table import SECTION_OF, TABLE
from tests.e2e.backends import CLI, clean_env

ROOT = Path(__file__).resolve().parent.parent
BOOLEANS = [r for r in TABLE if r.attribute and r.has_env and r.value.schema.get("type") == "boolean"]


def rules() -> list[str]:
    """The bullets of the section, each joined to one line."""
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    section = page.split("### Environment variable rules\n", 1)[1].split("\n#", 1)[0]
    return [" ".join(b.split()) for b in re.split(r"\n- ", "\n" + section.strip()) if b.strip()]


def rule(starts: str) -> str:
    found = [r for r in rules() if r.startswith(starts)]
    assert len(found) == 1, f"expected one rule starting {starts!r}: {rules()}"
    return found[0]


def boolean_spellings() -> tuple[list[str], list[str]]:
    """(accepted, refused): the rule's `code` spans before the semicolon, and after it."""
    accepted, refused = rule("Booleans").split(";", 1)
    return re.findall(r"`([^`]+)`", accepted), re.findall(r"`([^`]+)`", refused)


def test_the_rule_names_both_accepted_values_and_refused_ones() -> None:
    accepted, refused = boolean_spellings()
    assert accepted == ["true", "false"] and len(refused) >= 3
    assert "exit 2" in rule("Booleans")


@pytest.mark.parametrize("row", BOOLEANS, ids=lambda r: r.env)
def test_every_boolean_variable_takes_exactly_the_documented_values(row: Setting) -> None:
    accepted, refused = boolean_spellings()
    for text in accepted:
        settings = load_settings(config_file=None, env={row.env: text}, flags={})
        assert getattr(getattr(settings, SECTION_OF[row.name]), row.name) is (text == "true")
    for text in refused:
        with pytest.raises(ConfigError, match=f"^{row.env}: '{re.escape(text)}' is not a boolean"):
            load_settings(config_file=None, env={row.env: text}, flags={})


def test_a_refused_boolean_spelling_exits_2_naming_the_variable() -> None:
    _, refused = boolean_spellings()
    for text in refused:
        done = subprocess.run(
            [CLI, "plan"],
            env=clean_env({"KUBE_REHASH_EVENTS": text}),
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2, (text, done.stderr)
        assert f"KUBE_REHASH_EVENTS: '{text}' is not a boolean" in done.stderr


def test_null_resets_a_nullable_setting_and_an_empty_variable_counts_as_unset(tmp_path: Path) -> None:
    example = re.search(r"`(KUBE_REHASH_[A-Z_]+)=null`", rule("`null`"))
    assert example and "(or `none`)" in rule("`null`")
    config = tmp_path / "config.yaml"
    config.write_text("maxRollouts: 3\n", encoding="utf-8")
    for text in ("null", "none"):
        assert (
            load_settings(config_file=str(config), env={example.group(1): text}, flags={}).policy.max_rollouts
            is None
        )
    assert "empty variable counts as unset" in rule("An empty variable")
    assert (
        load_settings(config_file=str(config), env={example.group(1): ""}, flags={}).policy.max_rollouts == 3
    )


def test_lists_are_comma_separated_as_the_example_shows() -> None:
    example = re.search(r"`(KUBE_REHASH_NAMESPACES)=([^`]+)`", rule("Lists are comma-separated"))
    assert example
    settings = load_settings(config_file=None, env={example.group(1): example.group(2)}, flags={})
    assert settings.scope.namespaces == tuple(example.group(2).split(","))
