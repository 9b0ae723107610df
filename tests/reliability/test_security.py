"""Nothing secret leaks at any verbosity; keyed hashing end to end; configuration errors exit 2 clearly."""

from __future__ import annotations

import base64
from contextlib import ExitStack
from pathlib import Path

import pytest
import yaml

from tests.e2e.conftest import Cluster, configmap, deployment, env_from, env_key
from tests.otlp_capture import otlp_receiver
from tests.reliability.helpers import (
    HASH_KEY,
    actions,
    doc_combined,
    doc_source_token,
    in_process_pass,
    template_hash_changes,
    template_hash_of,
)

PLANTED_VALUE = "pl4nted-s3cret-VALUE-7f1c2a"
PLANTED_KEYED = "pl4nted-other-VALUE-c0ffee"
PLANTED_TOKEN = "pl4nted-bearer-TOKEN-9b8e77aa"
PLANTED_BODY = "pl4nted-error-BODY-4d5e6f"


def secret_obj(name: str, data: dict[str, str]) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "shop"},
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }


def forbidden_strings() -> list[str]:
    values = [PLANTED_VALUE, PLANTED_KEYED, PLANTED_TOKEN, PLANTED_BODY]
    return [*values, *(base64.b64encode(v.encode()).decode() for v in values), "Authorization", "Bearer "]


@pytest.mark.slow
@pytest.mark.parametrize("log_format", ["text", "json"])
def test_no_secret_value_token_or_error_body_appears_in_any_output_at_vvv(
    cluster: Cluster, log_format: str
) -> None:
    with ExitStack() as stack:
        leak_check(cluster, log_format, stack)


def leak_check(cluster: Cluster, log_format: str, stack: ExitStack) -> None:
    """Every output of four passes: stdout, stderr, Events, workloads, the Report, the OTLP exports."""
    cluster.sim.add_token(PLANTED_TOKEN, "planted-user", ("system:masters",))
    kubeconfig = str(cluster.sim.write_kubeconfig(cluster.tmp / "planted", token=PLANTED_TOKEN))
    cluster.add(
        secret_obj("db", {"password": PLANTED_VALUE, "other": PLANTED_KEYED}),
        configmap("app", {"a": "1"}),
        deployment("web", env_from("secret", "db")),
        deployment("key", env_key("secret", "db", "password")),
        deployment("broken", env_from("configmap", "app")),
    )
    outputs: list[str] = []
    receiver = stack.enter_context(otlp_receiver())
    config = cluster.tmp / "outputs.yaml"  # the Reports (the simulator serves them) and the OTLP push too
    config.write_text(f"reports: openreports\notlpEndpoint: {receiver.url}\n")
    argv = ("-vvv", "--log-format", log_format, "--kubeconfig", kubeconfig, "--config", str(config))
    first = cluster.cli("run", "-o", "json", *argv, kubeconfig=False)
    assert first.code == 0, first.stderr
    cluster.edit("secrets", "shop", "db", {"stringData": {"password": PLANTED_VALUE + "2"}})
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    # a server error whose body echoes content: only a bounded excerpt may be shown
    cluster.sim.faults.respond(
        400, message="x" * 260 + PLANTED_BODY, method="PATCH", path="/broken$", max_count=1
    )
    second = cluster.cli("run", "-o", "json", *argv, kubeconfig=False)
    assert second.code == 1
    assert second.actions()["Deployment/shop/broken"] == "failed"
    (report,) = cluster.sim.store.list("reports", "shop")  # the Report that tells of the failure
    assert [r["resources"][0]["name"] for r in report["results"]] == ["broken"]
    outputs.append(str(report))
    text = cluster.cli("run", "-o", "text", *argv, kubeconfig=False)
    explain = cluster.cli("explain", "deployment/web", "-n", "shop", *argv, kubeconfig=False)
    assert explain.code == 0, explain.stderr
    for result in (first, second, text, explain):
        outputs += [result.stdout, result.stderr]
    events = cluster.sim.store.list("events", "shop")
    assert {e["reason"] for e in events} == {"ConfigChanged", "RolloutFailed"}
    outputs += [str(e) for e in events]
    for workload in ("web", "key", "broken"):
        outputs.append(str(cluster.get("deployments", "shop", workload)))
    assert len(receiver.requests) == 3  # run, run and run (explain pushes nothing)
    outputs += [str(receiver.decoded(i)) for i in range(3)]
    outputs += [body.decode("latin-1") for _, _, body in receiver.requests]
    blob = "\n".join(outputs)
    assert "DEBUG" in blob or '"level": "debug"' in blob  # -vvv really was verbose
    for needle in forbidden_strings():
        assert needle not in blob, needle


def test_a_client_key_never_appears_in_output(cluster: Cluster) -> None:
    cert, key = cluster.sim.issue_client_cert("cert-user", ("system:masters",))
    kubeconfig = cluster.sim.write_kubeconfig(cluster.tmp / "cert", client_cert=(cert, key))
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    result = cluster.cli("run", "-vvv", "-o", "json", "--kubeconfig", str(kubeconfig), kubeconfig=False)
    assert result.code == 0, result.stderr
    key_body = "".join(key.decode().splitlines()[1:-1])
    blob = result.stdout + result.stderr
    assert key_body[:40] not in blob and base64.b64encode(key).decode()[:40] not in blob
    assert "PRIVATE KEY" not in blob


# -- keyed hashing --------------------------------------------------------------------------------------

KEY1 = b"first-hash-key-0123456789abcdef"
KEY2 = b"second-hash-key-fedcba9876543210"


def keyed_expected(cluster: Cluster, key: bytes) -> str:
    obj = cluster.get("secrets", "shop", "db")
    return doc_combined([("secret", "db", doc_source_token("secret", obj, None, key))], key)


def test_keyed_mode_from_the_config_file_stores_v1k_values_that_depend_on_the_key(cluster: Cluster) -> None:
    cluster.add(secret_obj("db", {"pw": "1234"}), deployment("web", env_from("secret", "db")))
    key_file = cluster.tmp / "hash.key"
    key_file.write_bytes(KEY1 + b"\n")
    config = cluster.config(f"hashKeyFile: {key_file}\n")
    result = cluster.run("--config", str(config))
    assert result.code == 0, result.stderr
    stored = cluster.get("deployments", "shop", "web")["metadata"]["annotations"][HASH_KEY]
    assert stored.startswith("v1k:") and stored == keyed_expected(cluster, KEY1)
    assert stored != keyed_expected(cluster, KEY2)
    unkeyed = doc_combined(
        [("secret", "db", doc_source_token("secret", cluster.get("secrets", "shop", "db"), None, None))], None
    )
    assert stored != unkeyed and stored[4:] != unkeyed[3:]
    sources = cluster.get("deployments", "shop", "web")["metadata"]["annotations"]["kube-rehash.io/sources"]
    assert doc_source_token("secret", cluster.get("secrets", "shop", "db"), None, None) not in sources


def test_rotating_the_key_re_records_every_workload_without_a_rollout_then_a_change_rolls_once(
    sim: Cluster,
) -> None:
    names = [f"w{i}" for i in range(5)]
    sim.add(secret_obj("db", {"pw": "1"}), *(deployment(n, env_from("secret", "db")) for n in names))
    assert set(actions(in_process_pass(sim.sim, sim.kubeconfig, hash_key=KEY1)).values()) == {"adopt"}
    assert set(actions(in_process_pass(sim.sim, sim.kubeconfig, hash_key=KEY1)).values()) == {"in-sync"}
    rotated = in_process_pass(sim.sim, sim.kubeconfig, hash_key=KEY2, max_rollouts=2)
    assert set(actions(rotated).values()) == {"refresh"}  # all five in one pass: a refresh restarts nothing
    assert all(r.reason.startswith("hash key changed (fingerprint ") for r in rotated.rows)
    assert set(actions(in_process_pass(sim.sim, sim.kubeconfig, hash_key=KEY2)).values()) == {"in-sync"}
    want = keyed_expected(sim, KEY2)
    for name in names:
        obj = sim.get("deployments", "shop", name)
        assert obj["metadata"]["annotations"]["kube-rehash.io/config-hash"] == want
        assert template_hash_changes(sim.sim, "deployments", "shop", name) == 0
    sim.edit("secrets", "shop", "db", {"stringData": {"pw": "2"}})
    rolled_per_pass = []
    for _ in range(4):
        report = in_process_pass(sim.sim, sim.kubeconfig, hash_key=KEY2, max_rollouts=2)
        rolled_per_pass.append(sum(1 for r in report.rows if r.action == "rollout"))
    assert rolled_per_pass == [2, 2, 1, 0]
    for name in names:
        assert template_hash_of(sim.get("deployments", "shop", name)) == keyed_expected(sim, KEY2)
        assert template_hash_changes(sim.sim, "deployments", "shop", name) == 1


# -- configuration errors: exit 2 naming the file, the field and the problem -------------------------


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("maxRollouts: [1\n", ["invalid YAML"]),
        ("maxRolouts: 3\n", ["maxRolouts"]),
        ("maxRollouts: many\n", ["maxRollouts"]),
        ("timeout: -1\n", ["timeout"]),
        ("compat: [reloader, nope]\n", ["compat"]),
        ("- just\n- a list\n", []),
    ],
    ids=["invalid-yaml", "unknown-key", "wrong-type", "negative", "unknown-compat", "not-a-mapping"],
)
def test_an_invalid_config_file_exits_2_naming_file_field_and_problem(
    cluster: Cluster, text: str, needles: list[str]
) -> None:
    path = write(cluster.tmp / "bad-config.yaml", text)
    result = cluster.cli("run", "--config", path)
    assert result.code == 2, (result.stdout, result.stderr)
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1 and "bad-config.yaml" in line, line
    for needle in needles:
        assert needle in line, line
    assert result.stdout == "" and cluster.writes() == []


def test_a_bad_kubeconfig_or_unknown_context_exits_2_with_the_file_named(cluster: Cluster) -> None:
    broken = write(cluster.tmp / "broken-kubeconfig", "clusters: [\n")
    result = cluster.cli("run", "--kubeconfig", broken, kubeconfig=False)
    assert result.code == 2 and "broken-kubeconfig" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    result = cluster.cli("run", "--context", "no-such-context")
    assert result.code == 2 and "no-such-context" in result.stderr, result.stderr
    doc = yaml.safe_load(cluster.kubeconfig.read_text())
    doc["users"][0]["user"] = {"token": 12345}
    odd = write(cluster.tmp / "odd-kubeconfig", yaml.safe_dump(doc))
    result = cluster.cli("run", "--kubeconfig", odd, kubeconfig=False)
    assert result.code in (2, 4), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert cluster.writes() == []
