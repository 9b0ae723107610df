"""Credentials loading: kubeconfig (token, client cert, exec plugin, merging, contexts) and in-cluster."""

from __future__ import annotations

import base64
import datetime
import sys
from pathlib import Path
from typing import Any

import pytest
import responses
import yaml
from data.certs import issue, make_ca, write_pair

from reconcile.errors import CredentialsError
from reconcile.kube import auth
from reconcile.kube.auth import AuthOptions, load_credentials
from reconcile.kube.client import ClientOptions, KubeClient

DATA = Path(__file__).parent / "data"
SERVER = "https://127.0.0.1:6443"


def write_kubeconfig(
    path: Path,
    user: dict[str, Any],
    *,
    cluster: dict[str, Any] | None = None,
    context: str = "ctx",
    extra_contexts: tuple[str, ...] = (),
) -> Path:
    """A one-cluster, one-user kubeconfig whose contexts all point at that user."""
    names = (context, *extra_contexts)
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": context,
        "clusters": [{"name": "c", "cluster": cluster or {"server": SERVER}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": n, "context": {"cluster": "c", "user": "u"}} for n in names],
    }
    path.write_text(yaml.safe_dump(document))
    return path


def exec_user(*args: str) -> dict[str, Any]:
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(DATA / "exec_plugin.py"), *args],
            "interactiveMode": "Never",
        }
    }


def test_token_user_gives_bearer_header_server_and_source(tmp_path: Path) -> None:
    config = write_kubeconfig(tmp_path / "config", {"token": "tok-123"}, cluster={"server": SERVER + "/"})
    creds = load_credentials(AuthOptions(kubeconfig=str(config)), env={})
    assert creds.server == SERVER
    assert creds.authorization() == "Bearer tok-123"
    assert creds.source == f"kubeconfig {config} context ctx"
    assert "tok-123" not in repr(creds)


def test_client_certificate_user_sets_session_cert_and_ca(tmp_path: Path) -> None:
    ca = make_ca()
    ca_path, _ = write_pair(tmp_path, "ca", ca)
    cert_path, key_path = write_pair(tmp_path, "client", issue(ca, "alice"))
    user = {"client-certificate": "client.crt", "client-key": "client.key"}  # relative to the kubeconfig
    config = write_kubeconfig(
        tmp_path / "config", user, cluster={"server": SERVER, "certificate-authority": str(ca_path)}
    )
    creds = load_credentials(AuthOptions(kubeconfig=str(config)), env={})
    session = creds.new_session()
    assert session.cert == (str(cert_path), str(key_path))
    assert session.verify == str(ca_path)
    assert creds.authorization() is None


def test_inline_certificate_data_is_written_to_files(tmp_path: Path) -> None:
    ca = make_ca()
    ca_path, _ = write_pair(tmp_path, "ca", ca)
    cert_path, key_path = write_pair(tmp_path, "client", issue(ca, "alice"))

    def b64(path: Path) -> str:
        return base64.b64encode(path.read_bytes()).decode()

    user = {"client-certificate-data": b64(cert_path), "client-key-data": b64(key_path)}
    cluster = {"server": SERVER, "certificate-authority-data": b64(ca_path)}
    config = write_kubeconfig(tmp_path / "config", user, cluster=cluster)
    session = load_credentials(AuthOptions(kubeconfig=str(config)), env={}).new_session()
    assert isinstance(session.cert, tuple)
    assert Path(session.cert[0]).read_bytes() == cert_path.read_bytes()
    assert Path(session.cert[1]).read_bytes() == key_path.read_bytes()
    assert isinstance(session.verify, str)
    assert Path(session.verify).read_bytes() == ca_path.read_bytes()


@responses.activate
def test_exec_plugin_token_reaches_the_authorization_header(tmp_path: Path) -> None:
    config = write_kubeconfig(tmp_path / "config", exec_user("exec-token"))
    creds = load_credentials(AuthOptions(kubeconfig=str(config)), env={})
    responses.add(responses.GET, SERVER + "/version", json={"gitVersion": "v1.31.0"})
    with KubeClient(creds, ClientOptions()) as client:
        assert client.get("/version") == {"gitVersion": "v1.31.0"}
    assert responses.calls[0].request.headers["Authorization"] == "Bearer exec-token"


def test_exec_plugin_token_is_refreshed_when_it_expires(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    config = write_kubeconfig(tmp_path / "config", exec_user("t", "--count", str(counter), "--expiring"))
    creds = load_credentials(AuthOptions(kubeconfig=str(config)), env={})
    first = creds.authorization()
    second = creds.authorization()
    assert first is not None and second is not None
    assert first != second and second.startswith("Bearer t-")


def test_exec_plugin_failure_fails_fast_without_leaking(tmp_path: Path) -> None:
    config = write_kubeconfig(tmp_path / "config", exec_user("secret-token", "--fail"))
    with pytest.raises(CredentialsError) as caught:
        load_credentials(AuthOptions(kubeconfig=str(config)), env={})
    message = str(caught.value)
    assert f"kubeconfig {config} context ctx" in message
    assert "plugin failed" in message and "login required" in message
    assert "secret-token" not in message


def test_context_without_credentials_is_rejected(tmp_path: Path) -> None:
    config = write_kubeconfig(tmp_path / "config", {"username": "only-a-name"})
    with pytest.raises(CredentialsError, match="no usable credentials"):
        load_credentials(AuthOptions(kubeconfig=str(config)), env={})


def test_kubeconfig_env_list_is_merged_first_file_wins(tmp_path: Path) -> None:
    first = {
        "current-context": "one",
        "clusters": [{"name": "shared", "cluster": {"server": "https://127.0.0.1:1111"}}],
        "users": [{"name": "u1", "user": {"token": "t1"}}],
        "contexts": [{"name": "one", "context": {"cluster": "shared", "user": "u1"}}],
    }
    second = {
        "current-context": "two",
        "clusters": [
            {"name": "shared", "cluster": {"server": "https://127.0.0.1:2222"}},
            {"name": "own", "cluster": {"server": "https://127.0.0.1:3333"}},
        ],
        "users": [{"name": "u2", "user": {"token": "t2"}}],
        "contexts": [
            {"name": "two", "context": {"cluster": "shared", "user": "u2"}},
            {"name": "three", "context": {"cluster": "own", "user": "u2"}},
        ],
    }
    (tmp_path / "a").write_text(yaml.safe_dump(first))
    (tmp_path / "b").write_text(yaml.safe_dump(second))
    env = {"KUBECONFIG": f"{tmp_path / 'missing'}:{tmp_path / 'a'}:{tmp_path / 'b'}"}
    default = load_credentials(AuthOptions(), env=env)
    assert (default.server, default.authorization()) == ("https://127.0.0.1:1111", "Bearer t1")
    assert default.source == f"kubeconfig {tmp_path / 'a'}:{tmp_path / 'b'} context one"
    two = load_credentials(AuthOptions(context="two"), env=env)
    assert (two.server, two.authorization()) == ("https://127.0.0.1:1111", "Bearer t2")
    three = load_credentials(AuthOptions(context="three"), env=env)
    assert three.server == "https://127.0.0.1:3333"


def test_home_kubeconfig_is_the_default(tmp_path: Path) -> None:
    (tmp_path / ".kube").mkdir()
    write_kubeconfig(tmp_path / ".kube" / "config", {"token": "home"})
    creds = load_credentials(AuthOptions(), env={"HOME": str(tmp_path)})
    assert creds.authorization() == "Bearer home"


def test_context_flag_chooses_and_unknown_context_is_named(tmp_path: Path) -> None:
    config = write_kubeconfig(tmp_path / "config", {"token": "tok"}, extra_contexts=("other",))
    chosen = load_credentials(AuthOptions(kubeconfig=str(config), context="other"), env={})
    assert chosen.source.endswith("context other")
    with pytest.raises(CredentialsError, match="context 'nope' not found") as caught:
        load_credentials(AuthOptions(kubeconfig=str(config), context="nope"), env={})
    assert "tok" not in str(caught.value).replace(str(tmp_path), "")


def test_missing_kubeconfig_and_not_in_cluster_is_a_credentials_error(tmp_path: Path) -> None:
    with pytest.raises(CredentialsError, match="no kubeconfig found"):
        load_credentials(AuthOptions(), env={"HOME": str(tmp_path)})
    with pytest.raises(CredentialsError, match="not running in a cluster"):
        load_credentials(AuthOptions(), env={"KUBECONFIG": str(tmp_path / "nope")})
    missing = tmp_path / "absent.yaml"
    with pytest.raises(CredentialsError, match=f"kubeconfig {missing}: file not found"):
        load_credentials(AuthOptions(kubeconfig=str(missing)), env={})


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("clusters: [unclosed", "not valid YAML"),
        ("", "empty or not a mapping"),
        ("clusters: {a: 1}", "clusters must be a list"),
        ("clusters: []\ncontexts: []\nusers: []\n", "no current-context"),
    ],
)
def test_invalid_kubeconfig_is_a_credentials_error_naming_the_file(
    tmp_path: Path, content: str, problem: str
) -> None:
    config = tmp_path / "config"
    config.write_text(content)
    with pytest.raises(CredentialsError, match=problem) as caught:
        load_credentials(AuthOptions(kubeconfig=str(config)), env={})
    assert str(config) in str(caught.value)


def in_cluster_env(host: str = "10.0.0.1") -> dict[str, str]:
    return {"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": "443", "HOME": "/nonexistent"}


def service_account(tmp_path: Path) -> Path:
    directory = tmp_path / "sa"
    directory.mkdir()
    (directory / "token").write_text("sa-token-1")
    write_pair(directory, "ca", make_ca())
    return directory


def test_in_cluster_service_account(tmp_path: Path) -> None:
    sa = service_account(tmp_path)
    creds = load_credentials(AuthOptions(), env=in_cluster_env(), service_account_dir=str(sa))
    assert creds.server == "https://10.0.0.1:443"
    assert creds.source == "in-cluster service account"
    assert creds.authorization() == "bearer sa-token-1"
    assert creds.new_session().verify == str(sa / "ca.crt")


def test_in_cluster_ipv6_host_is_bracketed(tmp_path: Path) -> None:
    sa = service_account(tmp_path)
    creds = load_credentials(AuthOptions(), env=in_cluster_env("fd00::1"), service_account_dir=str(sa))
    assert creds.server == "https://[fd00::1]:443"


def test_in_cluster_token_is_reread_after_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(auth, "TOKEN_REREAD_INTERVAL", datetime.timedelta(0))
    sa = service_account(tmp_path)
    creds = load_credentials(AuthOptions(), env=in_cluster_env(), service_account_dir=str(sa))
    assert creds.authorization() == "bearer sa-token-1"
    (sa / "token").write_text("sa-token-2")
    assert creds.authorization() == "bearer sa-token-2"


def test_reload_rereads_the_in_cluster_token(tmp_path: Path) -> None:
    sa = service_account(tmp_path)
    creds = load_credentials(AuthOptions(), env=in_cluster_env(), service_account_dir=str(sa))
    (sa / "token").write_text("rotated")
    creds.reload()
    assert creds.authorization() == "bearer rotated"


def test_in_cluster_without_token_file_is_a_credentials_error(tmp_path: Path) -> None:
    sa = service_account(tmp_path)
    (sa / "token").unlink()
    with pytest.raises(CredentialsError, match="in-cluster service account"):
        load_credentials(AuthOptions(), env=in_cluster_env(), service_account_dir=str(sa))


def test_insecure_skip_tls_verify_disables_verification_only_when_set(tmp_path: Path) -> None:
    insecure = write_kubeconfig(
        tmp_path / "insecure", {"token": "t"}, cluster={"server": SERVER, "insecure-skip-tls-verify": True}
    )
    plain = write_kubeconfig(tmp_path / "plain", {"token": "t"})
    assert load_credentials(AuthOptions(kubeconfig=str(insecure)), env={}).new_session().verify is False
    assert load_credentials(AuthOptions(kubeconfig=str(plain)), env={}).new_session().verify is True


def test_proxy_url_comes_from_the_kubeconfig(tmp_path: Path) -> None:
    cluster = {"server": SERVER, "proxy-url": "http://127.0.0.1:3128"}
    config = write_kubeconfig(tmp_path / "config", {"token": "t"}, cluster=cluster)
    session = load_credentials(AuthOptions(kubeconfig=str(config)), env={}).new_session()
    assert session.proxies == {"http": "http://127.0.0.1:3128", "https": "http://127.0.0.1:3128"}


def test_environment_ca_bundle_and_proxy_are_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tmp_path / "evil-ca.pem"))
    monkeypatch.setenv("CURL_CA_BUNDLE", str(tmp_path / "evil-ca.pem"))
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    ca_path, _ = write_pair(tmp_path, "ca", make_ca())
    cluster = {"server": SERVER, "certificate-authority": str(ca_path)}
    config = write_kubeconfig(tmp_path / "config", {"token": "t"}, cluster=cluster)
    session = load_credentials(AuthOptions(kubeconfig=str(config))).new_session()
    settings = session.merge_environment_settings(SERVER + "/version", {}, None, None, None)
    assert session.trust_env is False
    assert settings["verify"] == str(ca_path)
    assert settings["proxies"] == {}


def test_cluster_without_server_is_rejected(tmp_path: Path) -> None:
    config = write_kubeconfig(tmp_path / "config", {"token": "t"}, cluster={"insecure-skip-tls-verify": True})
    with pytest.raises(CredentialsError, match="context ctx: the cluster has no server URL"):
        load_credentials(AuthOptions(kubeconfig=str(config)), env={})


def test_tls_server_name_comes_from_the_kubeconfig_and_is_absent_by_default(tmp_path: Path) -> None:
    plain = write_kubeconfig(tmp_path / "plain", {"token": "t"})
    assert load_credentials(AuthOptions(kubeconfig=str(plain)), env={}).server_name is None
    named = write_kubeconfig(
        tmp_path / "named", {"token": "t"}, cluster={"server": SERVER, "tls-server-name": "api.internal"}
    )
    assert load_credentials(AuthOptions(kubeconfig=str(named)), env={}).server_name == "api.internal"
