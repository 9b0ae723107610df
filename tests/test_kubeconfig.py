"""The kubeconfig reader and exec-plugin runner that stand in for the `kubernetes` package: kubectl's
merge and path rules, inline data, exec plugins (info passed, caching, expiry, failures), token files,
and that a pass never imports `kubernetes` unless a legacy auth-provider asks for it."""

from __future__ import annotations

import base64
import datetime
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from data.certs import cert_pem, make_ca

from reconcile.errors import CredentialsError
from reconcile.kube import auth
from reconcile.kube.auth import AuthOptions, Credentials, load_credentials

ROOT = Path(__file__).resolve().parent.parent
SERVER = "https://127.0.0.1:6443"
CA = cert_pem(make_ca("kubeconfig-test-ca")[0])  # a CA file must hold a certificate (checked at load)

# A plugin that records KUBERNETES_EXEC_INFO and its env, counts its runs, and answers per its mode.
PLUGIN = textwrap.dedent(
    """
    import datetime, json, os, sys
    out, mode = sys.argv[1], sys.argv[2]
    runs = len(open(out).readlines()) + 1 if os.path.exists(out) else 1
    with open(out, "a") as handle:
        seen = {"info": os.environ["KUBERNETES_EXEC_INFO"], "env": os.environ.get("EXTRA")}
        handle.write(json.dumps(seen) + "\\n")
    minutes = {"valid": 60, "due": 1, "expired": -1}.get(mode.split(",")[0])
    if mode == "json" or (runs > 1 and "fail-later" in mode):
        print("not json" if mode == "json" else "", end="")
        sys.exit(0 if mode == "json" else 3)
    status = {"token": f"token-{runs}"}
    if mode == "cert":
        status = {"clientCertificateData": "CERT", "clientKeyData": "KEY"}
    if minutes is not None:
        when = datetime.datetime.now(datetime.UTC) + datetime.timedelta(minutes=minutes)
        status["expirationTimestamp"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    api = os.environ.get("API", "client.authentication.k8s.io/v1")
    print(json.dumps({"apiVersion": api, "kind": "ExecCredential", "status": status}))
    """
)


def kubeconfig(path: Path, user: dict[str, Any], cluster: dict[str, Any] | None = None, **top: Any) -> Path:
    document = {
        "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": cluster or {"server": SERVER}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        **top,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document))
    return path


def load(path: Path) -> Credentials:
    return load_credentials(AuthOptions(kubeconfig=str(path)), env={"EXTRA": "from-env"})


def exec_user(tmp_path: Path, mode: str, **extra: Any) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "plugin.py"
    script.write_text(PLUGIN)
    config = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": sys.executable,
        "args": [str(script), str(tmp_path / "runs"), mode],
        "interactiveMode": "Never",
        **extra,
    }
    return {"exec": config}


def runs(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "runs").read_text().splitlines()]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_kubeconfig_list_merges_users_and_current_context_first_definition_wins(tmp_path: Path) -> None:
    first = {"users": [{"name": "u", "user": {"token": "first"}}], "contexts": [], "clusters": []}
    (tmp_path / "a").write_text(yaml.safe_dump(first))
    kubeconfig(tmp_path / "b", {"token": "second"})  # the only current-context, cluster and context
    creds = load_credentials(AuthOptions(), env={"KUBECONFIG": f"{tmp_path / 'a'}:{tmp_path / 'b'}"})
    assert creds.authorization() == "Bearer first"
    assert creds.source.endswith("context ctx")


def test_relative_paths_resolve_against_the_file_that_defined_the_entry(tmp_path: Path) -> None:
    (tmp_path / "users").mkdir()
    (tmp_path / "users" / "token").write_text("from-file\n")
    users = {"users": [{"name": "u", "user": {"tokenFile": "token"}}], "contexts": [], "clusters": []}
    (tmp_path / "users" / "config").write_text(yaml.safe_dump(users))
    (tmp_path / "clusters").mkdir()
    (tmp_path / "clusters" / "ca.crt").write_bytes(CA)
    cluster = {"server": SERVER, "certificate-authority": "ca.crt"}
    kubeconfig(tmp_path / "clusters" / "config", {"token": "unused"}, cluster)
    env = {"KUBECONFIG": f"{tmp_path / 'users' / 'config'}:{tmp_path / 'clusters' / 'config'}"}
    creds = load_credentials(AuthOptions(), env=env)
    assert creds.authorization() == "Bearer from-file"
    assert creds.new_session().verify == str(tmp_path / "clusters" / "ca.crt")


def test_data_overrides_file_and_is_written_private(tmp_path: Path) -> None:
    cluster = {
        "server": SERVER,
        "certificate-authority": "missing.crt",
        "certificate-authority-data": b64(CA),
    }
    session = load(kubeconfig(tmp_path / "config", {"token": "t"}, cluster)).new_session()
    assert isinstance(session.verify, str)
    assert Path(session.verify).read_bytes() == CA
    assert stat.S_IMODE(os.stat(session.verify).st_mode) == 0o600


@pytest.mark.parametrize(
    ("user", "cluster", "problem"),
    [
        ({"token": "t"}, {"server": SERVER, "certificate-authority": "nope.crt"}, "certificate-authority "),
        (
            {"token": "t"},
            {"server": SERVER, "certificate-authority-data": "%%%"},
            "-data is not valid base64",
        ),
        ({"token": "t", "client-certificate-data": b64(b"C")}, None, "client-key must be given together"),
        ({"tokenFile": "absent"}, None, "token file"),
    ],
)
def test_bad_fields_are_named_without_secrets(
    tmp_path: Path, user: dict[str, Any], cluster: dict[str, Any] | None, problem: str
) -> None:
    config = kubeconfig(tmp_path / "config", user, cluster)
    with pytest.raises(CredentialsError, match=problem) as caught:
        load(config)
    assert f"kubeconfig {config} context ctx" in str(caught.value)
    assert "Bearer" not in str(caught.value)


def test_context_naming_an_unknown_user_is_named(tmp_path: Path) -> None:
    contexts = [{"name": "ctx", "context": {"cluster": "c", "user": "ghost"}}]
    config = kubeconfig(tmp_path / "config", {"token": "t"}, contexts=contexts)
    with pytest.raises(CredentialsError, match="context ctx: user 'ghost' not found"):
        load(config)


def test_username_and_password_give_basic_auth(tmp_path: Path) -> None:
    creds = load(kubeconfig(tmp_path / "config", {"username": "ann", "password": "pw"}))
    assert creds.authorization() == "Basic " + b64(b"ann:pw")


def test_token_file_is_reread_after_the_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth, "TOKEN_REREAD_INTERVAL", datetime.timedelta(0))
    (tmp_path / "token").write_text("one")
    creds = load(kubeconfig(tmp_path / "config", {"tokenFile": "token"}))
    assert creds.authorization() == "Bearer one"
    (tmp_path / "token").write_text("two")
    assert creds.authorization() == "Bearer two"
    (tmp_path / "token").unlink()  # a failed re-read keeps the last token
    assert creds.authorization() == "Bearer two"


def test_exec_plugin_gets_exec_info_env_and_cluster_info(tmp_path: Path) -> None:
    user = exec_user(tmp_path, "plain", env=[{"name": "EXTRA", "value": "from-kubeconfig"}])
    user["exec"]["provideClusterInfo"] = True
    ext = [{"name": "client.authentication.k8s.io/exec", "extension": {"audience": "x"}}]
    cluster = {"server": SERVER, "certificate-authority-data": b64(CA), "extensions": ext}
    creds = load(kubeconfig(tmp_path / "config", user, cluster))
    assert creds.authorization() == "Bearer token-1"
    (run,) = runs(tmp_path)
    info = json.loads(run["info"])
    assert info["apiVersion"] == "client.authentication.k8s.io/v1" and info["kind"] == "ExecCredential"
    assert info["spec"]["interactive"] is False
    assert info["spec"]["cluster"] == {
        "server": SERVER,
        "certificate-authority-data": b64(CA),
        "config": {"audience": "x"},
    }
    assert run["env"] == "from-kubeconfig"


def test_exec_plugin_without_cluster_info_and_v1beta1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("API", "client.authentication.k8s.io/v1beta1")
    user = exec_user(tmp_path, "plain", apiVersion="client.authentication.k8s.io/v1beta1")
    creds = load_credentials(AuthOptions(kubeconfig=str(kubeconfig(tmp_path / "config", user))))
    assert creds.authorization() == "Bearer token-1"
    assert "cluster" not in json.loads(runs(tmp_path)[0]["info"])["spec"]


@pytest.mark.parametrize(("mode", "calls"), [("plain", 1), ("valid", 1), ("due", 3), ("expired", 3)])
def test_exec_credential_is_cached_until_it_nears_expiry(tmp_path: Path, mode: str, calls: int) -> None:
    creds = load(kubeconfig(tmp_path / "config", exec_user(tmp_path, mode)))
    assert creds.authorization() == ("Bearer token-1" if calls == 1 else "Bearer token-2")
    creds.authorization()
    assert len(runs(tmp_path)) == calls


def test_failed_refresh_keeps_a_still_valid_token_and_fails_an_expired_one(tmp_path: Path) -> None:
    due = load(kubeconfig(tmp_path / "due" / "config", exec_user(tmp_path / "due", "due,fail-later")))
    assert due.authorization() == "Bearer token-1"  # expires in a minute: within the skew, still valid
    expired = load(kubeconfig(tmp_path / "old" / "config", exec_user(tmp_path / "old", "expired,fail-later")))
    with pytest.raises(CredentialsError, match=r"credentials plugin failed: .*exited with 3"):
        expired.authorization()


def test_exec_plugin_may_issue_a_client_certificate(tmp_path: Path) -> None:
    creds = load(kubeconfig(tmp_path / "config", exec_user(tmp_path, "cert")))
    assert creds.authorization() is None
    cert = creds.new_session().cert
    assert isinstance(cert, tuple)
    assert [Path(p).read_text() for p in cert] == ["CERT", "KEY"]


@pytest.mark.parametrize(
    ("mode", "extra", "problem"),
    [
        ("json", {}, "output is not JSON"),
        ("plain", {"apiVersion": "client.authentication.k8s.io/v1alpha1"}, "apiVersion .* not supported"),
        ("plain", {"interactiveMode": "Always"}, "interactiveMode Always"),
        ("plain", {"command": "./no-such-plugin"}, "cannot run"),
    ],
)
def test_exec_plugin_failures_name_the_command(
    tmp_path: Path, mode: str, extra: dict[str, Any], problem: str
) -> None:
    user = exec_user(tmp_path, mode, **extra)
    with pytest.raises(CredentialsError, match=problem) as caught:
        load(kubeconfig(tmp_path / "config", user))
    command = str(tmp_path / "no-such-plugin") if "command" in extra else sys.executable
    assert command in str(caught.value)


def test_in_cluster_without_ca_is_named(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("t")
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(CredentialsError, match=r"ca\.crt does not exist"):
        load_credentials(AuthOptions(), env=env, service_account_dir=str(tmp_path))


def python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'simulator'}", **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environ, check=False, timeout=60
    )


NO_KUBERNETES = "assert not any(m == 'kubernetes' or m.startswith('kubernetes.') for m in sys.modules)"


def test_a_pass_never_imports_the_kubernetes_package() -> None:
    modules = "reconcile.cli.commands, reconcile.pipeline.run, reconcile.cli.connect, reconcile.kube.auth"
    done = python(f"import sys; import {modules}; {NO_KUBERNETES}")
    assert done.returncode == 0, done.stderr


def test_plain_configs_load_without_the_package_and_auth_provider_uses_it(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("tf")
    for name, user in [("token", {"token": "t"}), ("file", {"tokenFile": "token"})]:
        kubeconfig(tmp_path / name, user)
    kubeconfig(tmp_path / "exec", exec_user(tmp_path, "plain"))
    plain = [str(tmp_path / n) for n in ("token", "file", "exec")]
    code = f"""import sys
from reconcile.kube.auth import AuthOptions, load_credentials
for path in {plain!r}:
    assert load_credentials(AuthOptions(kubeconfig=path)).authorization()
{NO_KUBERNETES}"""
    done = python(code)
    assert done.returncode == 0, done.stderr
    claims = base64.urlsafe_b64encode(json.dumps({"exp": 4102444800}).encode()).decode().rstrip("=")
    provider = {"name": "oidc", "config": {"id-token": f"e30.{claims}.sig", "idp-issuer-url": "https://x"}}
    kubeconfig(tmp_path / "oidc", {"auth-provider": provider})
    code = f"""import sys
from reconcile.kube.auth import AuthOptions, load_credentials
print(load_credentials(AuthOptions(kubeconfig={str(tmp_path / "oidc")!r})).authorization())
assert 'kubernetes' in sys.modules"""
    done = python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Bearer e30.{claims}.sig"
