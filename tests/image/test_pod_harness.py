"""Without podman the image tests skip with one line locally, and fail under CI (CI never silently skips)."""

from __future__ import annotations

import pytest

from tests.image.pod import built_image


def test_without_podman_the_image_tests_skip_locally_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBE_REHASH_NO_PODMAN", "1")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("KUBE_REHASH_REAL", raising=False)

    with pytest.raises(pytest.skip.Exception, match=r"^image tests need podman: KUBE_REHASH_NO_PODMAN=1$"):
        built_image()


@pytest.mark.parametrize("required", [("CI", "true"), ("KUBE_REHASH_REAL", "1")])
def test_without_podman_the_image_tests_fail_under_ci(
    monkeypatch: pytest.MonkeyPatch, required: tuple[str, str]
) -> None:
    monkeypatch.setenv("KUBE_REHASH_NO_PODMAN", "1")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("KUBE_REHASH_REAL", raising=False)
    monkeypatch.setenv(*required)

    with pytest.raises(pytest.fail.Exception, match=r"image tests need podman.*required"):
        built_image()


def test_a_missing_podman_is_named_in_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBE_REHASH_NO_PODMAN", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("KUBE_REHASH_REAL", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")

    with pytest.raises(pytest.skip.Exception, match="podman is not installed"):
        built_image()
