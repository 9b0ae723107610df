"""No test leaves itself out silently: the only way to skip is tests/prerequisites.py's `skip_or_fail`,
which fails under CI=true (set by .ci/run) or KUBE_REHASH_REAL=1. A new `skipif`, `pytest.skip(...)` or
`importorskip` would skip under CI too, so CI could pass without running the check."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.prerequisites import required, skip_or_fail

TESTS = Path(__file__).resolve().parent
# The one module allowed to call pytest.skip, and this file (which names the patterns).
ALLOWED = {TESTS / "prerequisites.py", Path(__file__).resolve()}
SKIPS = re.compile(r"\bskipif\b|pytest\.skip\(|\bimportorskip\b|mark\.skip\b|unittest\.skip")


def test_no_test_module_skips_except_through_skip_or_fail() -> None:
    found = [
        f"{path.relative_to(TESTS.parent)}:{number}: {line.strip()}"
        for path in sorted(TESTS.rglob("*.py"))
        if path not in ALLOWED
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if SKIPS.search(line)
    ]

    assert found == [], "skips that CI=true would not turn into failures:\n" + "\n".join(found)


@pytest.mark.parametrize(("variable", "value"), [("CI", "true"), ("CI", "TRUE"), ("KUBE_REHASH_REAL", "1")])
def test_a_missing_prerequisite_fails_under_ci(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("KUBE_REHASH_REAL", raising=False)
    monkeypatch.setenv(variable, value)

    assert required()
    with pytest.raises(pytest.fail.Exception, match=r"^no podman \(required: CI=true"):
        skip_or_fail("no podman")


def test_a_missing_prerequisite_skips_locally_saying_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "false")
    monkeypatch.delenv("KUBE_REHASH_REAL", raising=False)

    assert not required()
    with pytest.raises(pytest.skip.Exception, match=r"^no podman$"):
        skip_or_fail("no podman")
