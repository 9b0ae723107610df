"""The command's first request is its proof of contact (errors.NoContact): whatever that request is, an
unreachable server or rejected credentials end the command with exit 4 and one line, and nothing is sent
ahead of it to prove contact first."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import responses
from test_kube_client import SERVER, TOKEN, write_kubeconfig

from reconcile.cli.commands import main

UNAUTHORIZED = {"kind": "Status", "status": "Failure", "reason": "Unauthorized", "code": 401}


@pytest.fixture
def kubeconfig(tmp_path: Path) -> str:
    return str(write_kubeconfig(tmp_path / "config", TOKEN))


@responses.activate
def test_a_pass_sends_its_first_list_first_and_a_401_there_is_exit_4_in_one_line(
    kubeconfig: str, capsys: pytest.CaptureFixture[str]
) -> None:
    responses.add(responses.GET, SERVER + "/apis/apps/v1/deployments", json=UNAUTHORIZED, status=401)
    assert main(["run", "--kubeconfig", kubeconfig]) == 4
    out, err = capsys.readouterr()
    assert out == ""
    rejected = f"credentials rejected by {SERVER} (kubeconfig {kubeconfig} context ctx)"
    assert err.strip().splitlines()[-1] == f"kube-rehash: 401 Unauthorized: {rejected}"
    assert [call.request.path_url.split("?")[0] for call in responses.calls] == [
        "/apis/apps/v1/deployments",
        "/apis/apps/v1/deployments",  # once more after the credentials are reloaded
    ]
    assert TOKEN not in err


def test_a_hash_key_secret_read_first_from_an_unreachable_server_is_exit_4_not_a_configuration_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        server = f"https://127.0.0.1:{sock.getsockname()[1]}"
    kubeconfig = str(write_kubeconfig(tmp_path / "config", TOKEN, server))
    monkeypatch.setenv("KUBE_REHASH_HASH_KEY_SECRET", "kube-rehash/hash-key")
    assert main(["run", "--kubeconfig", kubeconfig]) == 4
    lines = capsys.readouterr().err.strip().splitlines()
    assert "connection refused on GET /api/v1/namespaces/kube-rehash/secrets/hash-key" in lines[0]
    assert (
        lines[-1]
        == f"kube-rehash: cannot reach the API server at {server} after 2 attempts: connection refused"
    )
