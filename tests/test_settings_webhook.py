"""The notify webhook's settings (`notify.webhook` in the config file, KUBE_REHASH_WEBHOOK_* in the
environment): the URL itself is never a setting, only where the Secret holding it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconcile.config.settings import load_settings
from reconcile.errors import ConfigError
from reconcile.settings.table import Settings


def _load(tmp_path: Path, text: str | None = None, env: dict[str, str] | None = None) -> Settings:
    config = None
    if text is not None:
        path = tmp_path / "config.yaml"
        path.write_text(text)
        config = str(path)
    return load_settings(config_file=config, env=env or {}, flags={})


def test_no_webhook_by_default() -> None:
    settings = Settings()
    assert settings.notify.webhook_secret is None
    assert (
        settings.notify.webhook_key,
        settings.notify.webhook_timeout,
        settings.notify.webhook_cluster,
    ) == ("url", 10.0, None)


def test_the_config_file_sets_every_webhook_key(tmp_path: Path) -> None:
    text = (
        "notify:\n  webhook: {secret: kube-rehash/hook, key: slack.url, timeout: 1m30s, cluster: prod-eu}\n"
    )
    settings = _load(tmp_path, text)
    assert (settings.notify.webhook_secret, settings.notify.webhook_key) == ("kube-rehash/hook", "slack.url")
    assert (settings.notify.webhook_timeout, settings.notify.webhook_cluster) == (90.0, "prod-eu")


def test_a_webhook_with_only_its_secret_takes_the_defaults(tmp_path: Path) -> None:
    settings = _load(tmp_path, "notify: {webhook: {secret: ops/hook}}\n")
    assert settings == Settings.of(webhook_secret="ops/hook")


@pytest.mark.parametrize("text", ["notify: {}\n", "notify: {webhook: null}\n"])
def test_an_empty_notify_or_a_null_webhook_is_no_webhook(tmp_path: Path, text: str) -> None:
    assert _load(tmp_path, text) == Settings()


def test_a_timeout_may_be_seconds(tmp_path: Path) -> None:
    assert _load(tmp_path, "notify: {webhook: {secret: a/b, timeout: 2.5}}\n").notify.webhook_timeout == 2.5


def test_the_environment_sets_the_webhook(tmp_path: Path) -> None:
    env = {
        "KUBE_REHASH_WEBHOOK_SECRET": "ops/hook",
        "KUBE_REHASH_WEBHOOK_KEY": "teams",
        "KUBE_REHASH_WEBHOOK_TIMEOUT": "3",
        "KUBE_REHASH_WEBHOOK_CLUSTER": "staging",
    }
    assert _load(tmp_path, env=env) == Settings.of(
        webhook_secret="ops/hook", webhook_key="teams", webhook_timeout=3.0, webhook_cluster="staging"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "notify: {webhook: {secret: hook}}",
            "notify.webhook.secret: 'hook' is not NAMESPACE/NAME",
        ),
        ("notify: {webhook: {secret: Ops/hook}}", "notify.webhook.secret: 'Ops/hook' is not NAMESPACE/NAME"),
        ("notify: {webhook: {key: url}}", "notify.webhook: 'secret' is a required property"),
        ("notify: {webhook: {secret: a/b, key: 'a b'}}", "notify.webhook.key: 'a b' is not a Secret key"),
        ("notify: {webhook: {secret: a/b, timeout: 0}}", "notify.webhook.timeout: 0"),
        ("notify: {webhook: {secret: a/b, timeout: soon}}", "notify.webhook.timeout: 'soon'"),
        (
            "notify: {webhook: {secret: a/b, timeout: 10m}}",
            "timeout: '10m' is more than 5 minutes",
        ),
        (
            "notify: {webhook: {secret: a/b, url: 'https://hooks.example/T0KEN'}}",
            "notify.webhook.url: unknown key",
        ),
        ("notify: {hook: {secret: a/b}}", "notify.hook: unknown key; did you mean 'webhook'?"),
    ],
)
def test_a_bad_webhook_setting_names_the_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text + "\n")
    assert message in str(caught.value)
    assert "T0KEN" not in str(caught.value) or "url: unknown key" in str(caught.value)


def test_a_bad_webhook_environment_variable_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KUBE_REHASH_WEBHOOK_SECRET: 'x' is not NAMESPACE/NAME"):
        _load(tmp_path, env={"KUBE_REHASH_WEBHOOK_SECRET": "x"})
