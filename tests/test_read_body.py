"""A response's body read in one piece (kube/transport.py `read_body`): the same bytes and the same errors
as `requests` reading it itself, for a plain and a gzipped body."""

from __future__ import annotations

import gzip
import json
import socket
import threading
from collections.abc import Iterator

import pytest
import requests
import responses

from reconcile.kube.transport import read_body

URL = "https://api.example:6443/api/v1/configmaps"
BODY = json.dumps({"items": [{"metadata": {"name": f"cm-{i:05d}"}} for i in range(5000)]}).encode()


@pytest.fixture
def mock() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzip"])
def test_a_body_read_in_one_piece_is_the_body_requests_reads(
    mock: responses.RequestsMock, packed: bool
) -> None:
    headers = {"Content-Encoding": "gzip"} if packed else {}
    wire = gzip.compress(BODY, 1) if packed else BODY
    assert len(BODY) > 100 * 1024  # many of requests' own 10 KiB pieces
    for _ in range(2):
        mock.add(responses.GET, URL, body=wire, headers=headers, content_type="application/json")
    with requests.Session() as session:
        whole = session.get(URL)
        streamed = session.get(URL, stream=True)
        read_body(streamed)
    assert streamed.content == whole.content == BODY
    assert streamed.json() == whole.json()
    assert streamed.raw.closed  # the connection was read to its end


def serve_once(answer: bytes) -> tuple[str, threading.Thread]:
    """A one-shot HTTP server on a local port that writes `answer` and closes the connection."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def run() -> None:
        with listener, listener.accept()[0] as conn:
            conn.recv(65536)
            conn.sendall(answer)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/", thread


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 10,
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 8\r\n\r\n" + b"not gzip",
    ],
    ids=["cut-off", "not-gzip"],
)
def test_a_body_that_cannot_be_read_raises_the_error_requests_raises(answer: bytes) -> None:
    url, thread = serve_once(answer)
    with requests.Session() as session, pytest.raises(requests.RequestException) as streamed:
        read_body(session.get(url, stream=True))
    thread.join(5)
    url, thread = serve_once(answer)
    with requests.Session() as session, pytest.raises(requests.RequestException) as whole:
        session.get(url)
    thread.join(5)
    assert type(streamed.value) is type(whole.value)
    broken = (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError)
    assert isinstance(whole.value, broken)
