"""Settings resolution: defaults, the config file, environment, flags, their precedence and every error."""

from __future__ import annotations

import dataclasses
from datetime import time, timedelta
from importlib import resources
from pathlib import Path

import pytest
import yaml

from reconcile.config.settings import load_settings
from reconcile.errors import ConfigError
from reconcile.model.choices import Reports
from reconcile.model.kinds import BUILTIN_KINDS, CRONJOB, DEPLOYMENT, Kind
from reconcile.model.windows import ALWAYS_OPEN, RestartWindows, Window, parse_windows
from reconcile.settings.table import ATTRIBUTES, Settings
from reconcile.settings.values import Shard

ROOT = Path(__file__).resolve().parent.parent


def _config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return str(path)


def _load(
    tmp_path: Path,
    text: str | None = None,
    env: dict[str, str] | None = None,
    flags: dict[str, object] | None = None,
) -> Settings:
    config = _config(tmp_path, text) if text is not None else None
    return load_settings(config_file=config, env=env or {}, flags=flags or {})


def _error(
    tmp_path: Path,
    text: str | None = None,
    env: dict[str, str] | None = None,
    flags: dict[str, object] | None = None,
) -> str:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text, env, flags)
    message = str(caught.value)
    assert "\n" not in message
    return message


# --- defaults and the shipped files ------------------------------------------------------------------


def test_no_sources_give_the_defaults() -> None:
    assert load_settings(config_file=None, env={}, flags={}) == Settings()


def test_the_documented_default_config_loads_to_exactly_the_defaults() -> None:
    settings = load_settings(config_file=str(ROOT / "config/default.yaml"), env={}, flags={})

    assert settings == Settings()


def test_the_documented_default_config_sets_every_key_of_the_schema() -> None:
    schema = yaml.safe_load((ROOT / "config/schema.json").read_text())
    document = yaml.safe_load((ROOT / "config/default.yaml").read_text())

    assert set(document) == set(schema["properties"])
    assert set(document["logging"]) == set(schema["properties"]["logging"]["properties"])


@pytest.mark.parametrize("name", ["schema.json", "default.yaml"])
def test_the_packaged_copies_equal_the_user_facing_files(name: str) -> None:
    packaged = resources.files("reconcile").joinpath(f"data/{name}").read_bytes()

    assert packaged == (ROOT / "config" / name).read_bytes()


def test_every_line_of_the_default_config_has_a_comment() -> None:
    lines = (ROOT / "config/default.yaml").read_text().splitlines()
    for i, line in enumerate(lines):
        if line.strip() and not line.lstrip().startswith("#") and not line.rstrip().endswith(":"):
            assert lines[i - 1].lstrip().startswith("#"), f"no comment above {line!r}"


def test_every_setting_is_documented_in_configuration_md() -> None:
    doc = (ROOT / "docs/configuration.md").read_text()
    schema = yaml.safe_load((ROOT / "config/schema.json").read_text())
    for key in schema["properties"]:
        assert f"`{key}`" in doc, key
    for row in ATTRIBUTES:
        if row.name not in ("shard", "kinds"):
            assert f"KUBE_REHASH_{row.name.upper()}" in doc, row.name


# --- the config file ------------------------------------------------------------------------------------


def test_a_config_file_sets_every_key(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_bytes(b"k" * 32)
    settings = _load(
        tmp_path,
        f"""
annotationPrefix: rehash.example.com
namespaces: [team-a, team-b]
excludeNamespaces: [kube-system]
kinds: [Deployment, CronJob]
customKinds:
  - {{kind: Database, group: db.example.com, version: v1, resource: databases,
     annotations: /spec/podAnnotations}}
  - kind: Widget
    group: example.com
    version: v1beta1
    resource: widgets
    namespaced: false
    podTemplate: /spec/template
    suspend: /spec/suspend
    paused: /spec/paused
firstSight: rollout
maxRollouts: 3
restartWindow: "Mon-Fri 22:00-06:00 Europe/Berlin; Sat,Sun 00:00-00:00"
rolloutDeadline: 1h30m
failOnStalled: true
compat: [reloader, wave]
fetch: get
timeout: 100
requestTimeout: 5.5
qps: 0
concurrency: 8
pageSize: 50
hashKeyFile: {key}
events: false
shards: 1
logging: {{format: json, verbosity: 2}}
pushgateway: http://pushgateway.monitoring:9091
""",
    )

    assert settings == Settings.of(
        prefix="rehash.example.com",
        namespaces=("team-a", "team-b"),
        exclude_namespaces=("kube-system",),
        kinds=(
            DEPLOYMENT,
            CRONJOB,
            Kind(
                "db.example.com",
                "v1",
                "databases",
                kind="Database",
                template=None,
                annotations="/spec/podAnnotations",
            ),
            Kind(
                "example.com",
                "v1beta1",
                "widgets",
                False,
                kind="Widget",
                suspend="/spec/suspend",
                paused="/spec/paused",
            ),
        ),
        first_sight="rollout",
        max_rollouts=3,
        restart_window="Mon-Fri 22:00-06:00 Europe/Berlin; Sat,Sun 00:00-00:00",
        rollout_deadline=timedelta(hours=1, minutes=30),
        fail_on_stalled=True,
        compat=frozenset({"reloader", "wave"}),
        fetch="get",
        timeout=100.0,
        request_timeout=5.5,
        qps=0.0,
        concurrency=8,
        page_size=50,
        hash_key_file=str(key),
        events=False,
        log_format="json",
        verbosity=2,
        pushgateway="http://pushgateway.monitoring:9091",
    )
    assert isinstance(settings.limits.timeout, float)


def test_an_empty_config_file_gives_the_defaults(tmp_path: Path) -> None:
    assert _load(tmp_path, "# nothing set\n") == Settings()


def test_the_config_file_comes_from_kube_rehash_config_without_the_flag(tmp_path: Path) -> None:
    path = _config(tmp_path, "maxRollouts: 4\n")

    assert (
        load_settings(config_file=None, env={"KUBE_REHASH_CONFIG": path}, flags={}).policy.max_rollouts == 4
    )


def test_the_config_flag_wins_over_kube_rehash_config(tmp_path: Path) -> None:
    path = _config(tmp_path, "maxRollouts: 4\n")
    env = {"KUBE_REHASH_CONFIG": str(tmp_path / "missing.yaml")}

    assert load_settings(config_file=path, env=env, flags={}).policy.max_rollouts == 4


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("maxRollouts: -1\n", "config.yaml: maxRollouts: -1 is less than the minimum of 0"),
        ("maxRollout: 3\n", "config.yaml: maxRollout: unknown key; did you mean 'maxRollouts'?"),
        ("logging: {format: xml}\n", "config.yaml: logging.format: 'xml' is not one of ['text', 'json']"),
        ("logging: {colour: true}\n", "config.yaml: logging.colour: unknown key"),
        ("concurrency: 33\n", "config.yaml: concurrency: 33 is greater than the maximum of 32"),
        ("pageSize: 0\n", "config.yaml: pageSize: 0 is less than the minimum of 1"),
        ("timeout: 0\n", "config.yaml: timeout: 0 is less than or equal to the minimum of 0"),
        ("qps: fast\n", "config.yaml: qps: 'fast' is not of type 'number'"),
        ("events: maybe\n", "config.yaml: events: 'maybe' is not a boolean (true or false)"),
        ("firstSight: restart\n", "config.yaml: firstSight: 'restart' is not one of ['adopt', 'rollout']"),
        ("compat: [kustomize]\n", "config.yaml: compat[0]: 'kustomize' is not one of"),
        ("kinds: [Job]\n", "config.yaml: kinds[0]: 'Job' is not one of"),
        (
            "kinds: [Deployment, Deployment]\n",
            "config.yaml: kinds: ['Deployment', 'Deployment'] has non-unique",
        ),
        ("namespaces: [Team_A]\n", "config.yaml: namespaces[0]: 'Team_A' is not a valid namespace name"),
        (
            "annotationPrefix: Example.COM\n",
            "config.yaml: annotationPrefix: 'Example.COM' is not a DNS subdomain",
        ),
        ("pushgateway: ftp://gw\n", "config.yaml: pushgateway: 'ftp://gw' is not an http(s) URL"),
        ("shards: 0\n", "config.yaml: shards: 0 is less than the minimum of 1"),
        (
            "customKinds: [{kind: Db, group: x.io, version: v1, resource: dbs}]\n",
            "config.yaml: customKinds[0]: set exactly one of podTemplate or annotations",
        ),
        (
            "customKinds: [{kind: Db, group: x.io, version: v1, resource: dbs, podTemplate: spec}]\n",
            "config.yaml: customKinds[0].podTemplate: 'spec' does not match",
        ),
        (
            "customKinds: [{kind: Db, group: x.io, version: v1, resource: dbs, podTemplate: /a, extra: 1}]\n",
            "config.yaml: customKinds[0].extra: unknown key",
        ),
        (
            "customKinds: [{kind: Dep, group: apps, version: v1, resource: deployments, podTemplate: /a}]\n",
            "config.yaml: customKinds[0]: Dep (deployments) clashes with the built-in kind Deployment",
        ),
        ("- maxRollouts\n", "config.yaml: the top level must be a mapping of settings, not list"),
        (
            "timeout: 1\ntimeout: 2\n",
            "config.yaml: invalid YAML at line 2, column 1: duplicate key 'timeout'",
        ),
        ("timeout: [1\n", "config.yaml: invalid YAML at line 2"),
        ("kinds: []\n", "config.yaml: kinds: at least one kind must be enabled"),
        (
            "restartWindow: Mon-Fry 22:00-06:00\n",
            "config.yaml: restartWindow: window 1 'Mon-Fry 22:00-06:00': unknown day 'Fry' (use Mon, Tue,",
        ),
        (
            "restartWindow: Sat 00:00-24:00\n",
            "config.yaml: restartWindow: window 1 'Sat 00:00-24:00': end time '24:00' is not a time from",
        ),
        (
            "restartWindow: Mon 09:00-10:00 Mars/Olympus\n",
            "config.yaml: restartWindow: window 1 'Mon 09:00-10:00 Mars/Olympus': unknown time zone",
        ),
        ("restartWindow: Mon 09:00-10:00;;\n", "config.yaml: restartWindow: window 2 is empty"),
        ("restartWindow: 5\n", "config.yaml: restartWindow: 5 is not of type 'string'"),
        (
            "rolloutDeadline: soon\n",
            "config.yaml: rolloutDeadline: 'soon' is not a duration like 10m, 1h30m or 45s",
        ),
        ("rolloutDeadline: 0s\n", "config.yaml: rolloutDeadline: '0s' is not a positive duration"),
        ("rolloutDeadline: 600\n", "config.yaml: rolloutDeadline: 600 is not of type 'string'"),
        ("failOnStalled: maybe\n", "config.yaml: failOnStalled: 'maybe' is not a boolean (true or false)"),
        ("events: yes\n", "config.yaml: events: 'yes' is not a boolean (true or false)"),
        ("events: off\n", "config.yaml: events: 'off' is not a boolean (true or false)"),
        ("events: 1\n", "config.yaml: events: 1 is not a boolean (true or false)"),
        (
            'skipIfPodsNewer: "false"\n',
            "config.yaml: skipIfPodsNewer: 'false' is not a boolean (true or false) "
            "(write true or false unquoted)",
        ),
    ],
)
def test_an_invalid_config_file_is_one_line_naming_file_key_and_problem(
    tmp_path: Path, text: str, expected: str
) -> None:
    message = _error(tmp_path, text)

    assert message.startswith(f"{tmp_path}/{expected}"), message


def test_an_unreadable_config_file_is_a_config_error_naming_it(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match=rf"^{missing}: cannot read the config file: No such file"):
        load_settings(config_file=missing, env={}, flags={})


def test_a_config_file_that_is_not_utf8_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(b"timeout: \xff\xfe\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_settings(config_file=str(path), env={}, flags={})


# --- environment and flags ----------------------------------------------------------------------------


def test_environment_variables_set_every_field(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("secret")
    env = {
        "KUBE_REHASH_PREFIX": "rehash.example.com",
        "KUBE_REHASH_NAMESPACES": "team-a, team-b",
        "KUBE_REHASH_EXCLUDE_NAMESPACES": "kube-system",
        "KUBE_REHASH_KINDS": "Deployment",
        "KUBE_REHASH_FIRST_SIGHT": "rollout",
        "KUBE_REHASH_MAX_ROLLOUTS": "5",
        "KUBE_REHASH_RESTART_WINDOW": "* 01:00-05:00 America/New_York",
        "KUBE_REHASH_ROLLOUT_DEADLINE": "45s",
        "KUBE_REHASH_FAIL_ON_STALLED": "true",
        "KUBE_REHASH_COMPAT": "pod-reloader",
        "KUBE_REHASH_FETCH": "list",
        "KUBE_REHASH_DRY_RUN": "server",
        "KUBE_REHASH_OUTPUT": "json",
        "KUBE_REHASH_SHARD": "1/3",
        "KUBE_REHASH_TIMEOUT": "60",
        "KUBE_REHASH_REQUEST_TIMEOUT": "2.5",
        "KUBE_REHASH_QPS": "50",
        "KUBE_REHASH_CONCURRENCY": "2",
        "KUBE_REHASH_PAGE_SIZE": "100",
        "KUBE_REHASH_HASH_KEY_FILE": str(key),
        "KUBE_REHASH_EVENTS": "false",
        "KUBE_REHASH_LOG_FORMAT": "json",
        "KUBE_REHASH_VERBOSITY": "3",
        "KUBE_REHASH_PUSHGATEWAY": "https://gw:9091",
        "KUBE_REHASH_KUBECONFIG": "/kube/config",
        "KUBE_REHASH_CONTEXT": "prod",
        "KUBECONFIG": "/not/read/here",
    }

    assert _load(tmp_path, env=env) == Settings.of(
        prefix="rehash.example.com",
        namespaces=("team-a", "team-b"),
        exclude_namespaces=("kube-system",),
        kinds=(DEPLOYMENT,),
        first_sight="rollout",
        max_rollouts=5,
        restart_window="* 01:00-05:00 America/New_York",
        rollout_deadline=timedelta(seconds=45),
        fail_on_stalled=True,
        compat=frozenset({"pod-reloader"}),
        fetch="list",
        dry_run="server",
        output="json",
        shard=Shard(1, 3),
        timeout=60.0,
        request_timeout=2.5,
        qps=50.0,
        concurrency=2,
        page_size=100,
        hash_key_file=str(key),
        events=False,
        log_format="json",
        verbosity=3,
        pushgateway="https://gw:9091",
        kubeconfig="/kube/config",
        context="prod",
    )


def test_flags_set_the_fields_argparse_produces(tmp_path: Path) -> None:
    flags: dict[str, object] = {
        "namespaces": ["team-a"],
        "max_rollouts": 0,
        "shard": "0/2",
        "timeout": 30.0,
        "dry_run": "client",
        "output": "json",
        "log_format": "json",
        "verbosity": 2,
        "kubeconfig": "kc",
        "context": "ctx",
        "pushgateway": "http://gw",
        "fetch": "get",
        "fail_on_stalled": True,
    }

    assert _load(tmp_path, flags=flags) == Settings.of(
        namespaces=("team-a",),
        max_rollouts=0,
        shard=Shard(0, 2),
        timeout=30.0,
        dry_run="client",
        output="json",
        log_format="json",
        verbosity=2,
        kubeconfig="kc",
        context="ctx",
        pushgateway="http://gw",
        fetch="get",
        fail_on_stalled=True,
    )


def test_precedence_is_flags_over_environment_over_file_over_defaults(tmp_path: Path) -> None:
    text = "maxRollouts: 1\ntimeout: 100\nqps: 5\nnamespaces: [from-file]\n"
    env = {
        "KUBE_REHASH_MAX_ROLLOUTS": "2",
        "KUBE_REHASH_TIMEOUT": "200",
        "KUBE_REHASH_NAMESPACES": "from-env",
    }
    flags: dict[str, object] = {"max_rollouts": 3, "namespaces": ["from-flag"]}

    settings = _load(tmp_path, text, env, flags)

    assert settings.policy.max_rollouts == 3  # flag over env and file
    assert settings.scope.namespaces == ("from-flag",)  # flag over env and file
    assert settings.limits.timeout == 200.0  # env over file
    assert settings.limits.qps == 5.0  # file over default
    assert settings.limits.concurrency == 4  # default


def test_empty_environment_values_and_none_flags_count_as_unset(tmp_path: Path) -> None:
    settings = _load(tmp_path, "maxRollouts: 1\n", {"KUBE_REHASH_MAX_ROLLOUTS": ""}, {"max_rollouts": None})

    assert settings.policy.max_rollouts == 1


def test_null_in_the_environment_resets_a_nullable_setting(tmp_path: Path) -> None:
    assert (
        _load(tmp_path, "maxRollouts: 1\n", {"KUBE_REHASH_MAX_ROLLOUTS": "null"}).policy.max_rollouts is None
    )


def test_unrelated_kube_rehash_variables_such_as_service_links_are_ignored(tmp_path: Path) -> None:
    env = {"KUBE_REHASH_SERVICE_HOST": "10.0.0.1", "KUBE_REHASH_PORT": "tcp://10.0.0.1:9091"}

    assert _load(tmp_path, env=env) == Settings()


@pytest.mark.parametrize(
    ("env", "flags", "expected"),
    [
        ({"KUBE_REHASH_MAX_ROLLOUTS": "many"}, {}, "KUBE_REHASH_MAX_ROLLOUTS: 'many' is not an integer"),
        ({}, {"max_rollouts": -1}, "--max-rollouts: -1 is less than the minimum of 0"),
        (
            {"KUBE_REHASH_TIMEOUT": "-5"},
            {},
            "KUBE_REHASH_TIMEOUT: -5.0 is less than or equal to the minimum of 0",
        ),
        ({}, {"timeout": float("nan")}, "--timeout: nan is not a finite number"),
        ({"KUBE_REHASH_EVENTS": "maybe"}, {}, "KUBE_REHASH_EVENTS: 'maybe' is not a boolean"),
        ({"KUBE_REHASH_EVENTS": "yes"}, {}, "KUBE_REHASH_EVENTS: 'yes' is not a boolean (true or false)"),
        ({"KUBE_REHASH_FAIL_ON_STALLED": "1"}, {}, "KUBE_REHASH_FAIL_ON_STALLED: '1' is not a boolean"),
        ({"KUBE_REHASH_EVENTS": "True"}, {}, "KUBE_REHASH_EVENTS: 'True' is not a boolean"),
        (
            {"KUBE_REHASH_DRY_RUN": "yes"},
            {},
            "KUBE_REHASH_DRY_RUN: 'yes' is not one of 'none', 'client', 'server'",
        ),
        ({}, {"output": "yaml"}, "--output: 'yaml' is not one of 'text', 'json'"),
        ({}, {"namespaces": ["ok", "Not_OK"]}, "--namespace: 'Not_OK' is not a valid namespace name"),
        ({"KUBE_REHASH_COMPAT": "reloader,flux"}, {}, "KUBE_REHASH_COMPAT: 'flux' is not one of"),
        ({"KUBE_REHASH_KINDS": "Job"}, {}, "KUBE_REHASH_KINDS: 'Job' is not a built-in or preset kind"),
        ({}, {"pushgateway": "gw:9091"}, "--pushgateway: 'gw:9091' is not an http(s) URL"),
        ({}, {"verbosity": 11}, "-v: 11 is greater than the maximum of 10"),
        ({}, {"shard": "2/2"}, "--shard: '2/2': the index must be below the count"),
        ({}, {"shard": "1"}, "--shard: '1' is not of the form I/N"),
        ({"KUBE_REHASH_SHARD": "0/0"}, {}, "KUBE_REHASH_SHARD: '0/0': the shard count must be at least 1"),
        ({"KUBE_REHASH_SHARDS": "0"}, {}, "KUBE_REHASH_SHARDS: 0 is less than the minimum of 1"),
        (
            {"KUBE_REHASH_RESTART_WINDOW": "Mon 25:61-06:00"},
            {},
            "KUBE_REHASH_RESTART_WINDOW: window 1 'Mon 25:61-06:00': start time '25:61' is not a time from",
        ),
        (
            {"KUBE_REHASH_ROLLOUT_DEADLINE": "-5m"},
            {},
            "KUBE_REHASH_ROLLOUT_DEADLINE: '-5m' is not a duration like 10m, 1h30m or 45s",
        ),
        (
            {"KUBE_REHASH_FAIL_ON_STALLED": "sometimes"},
            {},
            "KUBE_REHASH_FAIL_ON_STALLED: 'sometimes' is not a",
        ),
        *(
            (
                {"KUBE_REHASH_EVENTS": text},
                {},
                f"KUBE_REHASH_EVENTS: {text!r} is not a boolean (true or false)",
            )
            for text in ("yes", "no", "1", "0", "on", "off", "True", "FALSE")
        ),
        ({}, {"restart_window": "Mon"}, "--restart-window: window 1 'Mon': missing the times HH:MM-HH:MM"),
        (
            {"KUBE_REHASH_NAMESPACES": "a,b", "KUBE_REHASH_EXCLUDE_NAMESPACES": "b"},
            {},
            "KUBE_REHASH_EXCLUDE_NAMESPACES: namespace 'b' is both included (KUBE_REHASH_NAMESPACES)",
        ),
    ],
)
def test_an_invalid_environment_variable_or_flag_is_named_in_a_one_line_error(
    tmp_path: Path, env: dict[str, str], flags: dict[str, object], expected: str
) -> None:
    assert _error(tmp_path, env=env, flags=flags).startswith(expected)


def test_an_unknown_flag_key_is_a_programming_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="detailed_exitcode"):
        _load(tmp_path, flags={"detailed_exitcode": True})


# --- kinds --------------------------------------------------------------------------------------------


def test_all_builtin_kinds_are_enabled_by_default() -> None:
    assert Settings().scope.kinds == BUILTIN_KINDS


def test_custom_kinds_are_added_to_the_builtin_kinds_the_environment_selects(tmp_path: Path) -> None:
    text = "customKinds: [{kind: Db, group: x.io, version: v1, resource: dbs, podTemplate: /spec/template}]\n"

    settings = _load(tmp_path, text, {"KUBE_REHASH_KINDS": "CronJob"})

    assert [k.kind for k in settings.scope.kinds] == ["CronJob", "Db"]


def test_two_custom_kinds_for_the_same_resource_are_rejected(tmp_path: Path) -> None:
    entry = "{kind: Db, group: x.io, version: v1, resource: dbs, podTemplate: /t}"

    assert "customKinds[1]: Db (dbs) clashes with the custom kind Db" in _error(
        tmp_path, f"customKinds: [{entry}, {entry}]\n"
    )


# --- shards -------------------------------------------------------------------------------------------


def test_shards_in_the_file_take_the_index_from_job_completion_index(tmp_path: Path) -> None:
    assert _load(tmp_path, "shards: 4\n", {"JOB_COMPLETION_INDEX": "3"}).scope.shard == Shard(3, 4)


def test_kube_rehash_shards_overrides_the_file(tmp_path: Path) -> None:
    env = {"KUBE_REHASH_SHARDS": "8", "JOB_COMPLETION_INDEX": "7"}

    assert _load(tmp_path, "shards: 4\n", env).scope.shard == Shard(7, 8)


def test_an_explicit_shard_wins_over_shards_and_job_completion_index(tmp_path: Path) -> None:
    env = {"JOB_COMPLETION_INDEX": "3", "KUBE_REHASH_SHARD": "1/2"}

    assert _load(tmp_path, "shards: 4\n", env).scope.shard == Shard(1, 2)
    assert _load(tmp_path, "shards: 4\n", env, {"shard": "0/5"}).scope.shard == Shard(0, 5)


def test_one_shard_means_no_sharding(tmp_path: Path) -> None:
    assert _load(tmp_path, "shards: 1\n", {"JOB_COMPLETION_INDEX": "0"}).scope.shard is None


def test_shards_without_a_completion_index_is_an_error(tmp_path: Path) -> None:
    message = _error(tmp_path, "shards: 4\n")

    assert message == (
        f"{tmp_path}/config.yaml: shards: 4 shards need JOB_COMPLETION_INDEX (set in an Indexed Job)"
        " or --shard I/4"
    )


def test_a_completion_index_beyond_the_shards_is_an_error(tmp_path: Path) -> None:
    message = _error(tmp_path, "shards: 4\n", {"JOB_COMPLETION_INDEX": "4"})

    assert message.startswith("JOB_COMPLETION_INDEX: 4 is not below the shard count 4")


@pytest.mark.parametrize(("index", "count"), [(-1, 2), (2, 2), (0, 0)])
def test_an_impossible_shard_cannot_be_built(index: int, count: int) -> None:
    with pytest.raises(ValueError, match="shard"):
        Shard(index, count)


# --- hash key file ------------------------------------------------------------------------------------


def test_a_missing_hash_key_file_is_an_error_at_load(tmp_path: Path) -> None:
    message = _error(tmp_path, f"hashKeyFile: {tmp_path}/absent\n")

    assert message.startswith(f"{tmp_path}/config.yaml: hashKeyFile: cannot read the hash key file")
    assert "No such file" in message


def test_an_empty_hash_key_file_is_an_error_at_load(tmp_path: Path) -> None:
    (tmp_path / "key").write_bytes(b"")

    assert _error(tmp_path, env={"KUBE_REHASH_HASH_KEY_FILE": str(tmp_path / "key")}).endswith("is empty")


def test_a_directory_as_hash_key_file_is_an_error(tmp_path: Path) -> None:
    assert "is a directory" in _error(tmp_path, flags={"hash_key_file": str(tmp_path)})


# --- direct construction ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"max_rollouts": -1},
        {"concurrency": 0},
        {"page_size": 5001},
        {"timeout": 0.0},
        {"dry_run": "yes"},
        {"prefix": "Bad Prefix"},
        {"compat": frozenset({"flux"})},
        {"kinds": (DEPLOYMENT, DEPLOYMENT)},
        {"restart_window": "Mon 09:00-10:00 Nowhere/Town"},
        {"rollout_deadline": timedelta(0)},
        {"rollout_deadline": "10m"},
        {"fail_on_stalled": "yes"},
    ],
)
def test_settings_reject_impossible_values_when_built_directly(change: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Settings.of(**change)  # type: ignore[arg-type]


def test_settings_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Settings().timeout = 1.0  # type: ignore[misc]


# --- restart windows and rollout health -------------------------------------------------------------------


def test_restart_window_rollout_deadline_and_fail_on_stalled_defaults() -> None:
    settings = Settings()

    assert settings.policy.restart_window == ""
    assert settings.policy.restart_windows == ALWAYS_OPEN
    assert settings.policy.rollout_deadline == timedelta(minutes=10)
    assert settings.policy.fail_on_stalled is False


def test_the_restart_window_is_parsed_once_per_settings(tmp_path: Path) -> None:
    settings = _load(tmp_path, "restartWindow: 'Sat,Sun 02:00-05:00 Europe/Berlin'\n")

    assert settings.policy.restart_windows == RestartWindows(
        (Window(frozenset({5, 6}), time(2), time(5), "Europe/Berlin"),)
    )
    assert settings.policy.restart_windows is settings.policy.restart_windows
    assert settings == dataclasses.replace(settings)  # the parsed value is not part of equality


def test_an_empty_restart_window_in_the_environment_counts_as_unset(tmp_path: Path) -> None:
    settings = _load(tmp_path, "restartWindow: Mon 09:00-10:00\n", {"KUBE_REHASH_RESTART_WINDOW": ""})

    assert settings.policy.restart_windows == parse_windows("Mon 09:00-10:00")


def test_an_empty_restart_window_in_the_file_is_always_open(tmp_path: Path) -> None:
    assert _load(tmp_path, 'restartWindow: ""\n').policy.restart_windows == ALWAYS_OPEN


def test_a_rollout_deadline_built_directly_is_a_timedelta() -> None:
    assert Settings.of(rollout_deadline=timedelta(seconds=30)).policy.rollout_deadline == timedelta(
        seconds=30
    )


@pytest.mark.parametrize(("text", "expected"), [("true", True), ("false", False), (" true ", True)])
def test_a_boolean_in_the_environment_is_exactly_true_or_false(
    tmp_path: Path, text: str, expected: bool
) -> None:
    assert _load(tmp_path, env={"KUBE_REHASH_EVENTS": text}).output.events is expected


@pytest.mark.parametrize("value", ["yes", "on", "True", "1"])
def test_a_boolean_in_the_config_file_is_true_or_false_nothing_else(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError, match="failOnStalled"):
        _load(tmp_path, f"failOnStalled: {value}\n")
    assert _load(tmp_path, "failOnStalled: true\n").policy.fail_on_stalled is True
    assert _load(tmp_path, "failOnStalled: false\n").policy.fail_on_stalled is False


def test_yes_and_on_are_strings_in_the_config_file_not_booleans(tmp_path: Path) -> None:
    assert _load(tmp_path, "namespaces: [on, yes]\n").scope.namespaces == ("on", "yes")


def test_reports_otlp_endpoint_and_cluster_name_come_from_the_file_and_the_environment(
    tmp_path: Path,
) -> None:
    from_file = _load(
        tmp_path,
        "reports: openreports\notlpEndpoint: http://collector:4318/v1/metrics\nclusterName: prod-eu\n",
    )
    out = from_file.output
    assert (out.reports, out.otlp_endpoint, out.cluster_name) == (
        Reports.OPENREPORTS,
        "http://collector:4318/v1/metrics",
        "prod-eu",
    )
    assert out.reports is Reports.OPENREPORTS
    env = {"KUBE_REHASH_REPORTS": "openreports", "KUBE_REHASH_OTLP_ENDPOINT": "https://otel:4318/v1/metrics"}
    from_env = load_settings(config_file=None, env=env, flags={})
    assert (from_env.output.reports, from_env.output.otlp_endpoint) == (
        Reports.OPENREPORTS,
        "https://otel:4318/v1/metrics",
    )
    assert Settings().output.reports is Reports.NONE


def test_a_reports_value_outside_its_choices_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="reports"):
        load_settings(config_file=None, env={"KUBE_REHASH_REPORTS": "policyreports"}, flags={})


@pytest.mark.parametrize(
    ("text", "env", "flags", "seconds"),
    [
        ("timeout: 30s\n", None, None, 30.0),
        ("timeout: 90\n", None, None, 90.0),
        (None, {"KUBE_REHASH_TIMEOUT": "4m"}, None, 240.0),
        (None, None, {"timeout": "1m30s"}, 90.0),
        (None, None, {"timeout": "45"}, 45.0),
    ],
)
def test_the_pass_timeout_takes_seconds_or_a_duration_as_every_other_duration_does(
    tmp_path: Path,
    text: str | None,
    env: dict[str, str] | None,
    flags: dict[str, object] | None,
    seconds: float,
) -> None:
    assert _load(tmp_path, text, env, flags).limits.timeout == seconds


def test_a_pass_timeout_that_is_neither_names_the_field(tmp_path: Path) -> None:
    assert _error(tmp_path, "timeout: soon\n").endswith(
        "config.yaml: timeout: 'soon' is not a duration like 10m, 1h30m or 45s"
    )


def test_a_duration_in_days_is_24_hours_each(tmp_path: Path) -> None:
    assert _load(tmp_path, "rolloutDeadline: 1d12h\n").policy.rollout_deadline == timedelta(hours=36)
