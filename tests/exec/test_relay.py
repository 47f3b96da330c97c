"""governor's relay on real loopback sockets: forwarding, streaming, bad input, what it records."""

from __future__ import annotations

import hashlib
import http.client
import json
import socket
import threading
import time

import pytest

from governor.exec.relay import Relay
from governor.exec.relayed import start_relay
from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import dead_url
from tests.fakevendor.raw import HttpProxy, RawServer, read_body, read_head
from tests.fakevendor.server import FakeVendor

KEY = "sk-ant-fake-relay-0123456789abcdef"
PROMPT = "a prompt that must never be recorded 7d1f"
DEADLINE_S = 60


def port_of(relay: Relay) -> int:
    return int(relay.url.split(":")[2].split("/")[0])


def post(relay: Relay, path: str = "/v1/messages", body: object = None, **headers: str):
    client = http.client.HTTPConnection("127.0.0.1", port_of(relay), timeout=DEADLINE_S)
    data = json.dumps(body if body is not None else {"stream": True, "prompt": PROMPT})
    client.request("POST", path, body=data, headers={"x-api-key": KEY, **headers})
    response = client.getresponse()
    return response.status, dict(response.getheaders()), response.read()


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.01)


def test_a_streamed_reply_passes_unchanged_and_only_metadata_is_recorded():
    with FakeVendor(sc.reply("hello there")) as vendor, Relay(vendor.url, {}) as relay:
        status, _, body = post(relay, **{"user-agent": "claude-cli/2.1.197 (external, cli)"})
        direct = http.client.HTTPConnection("127.0.0.1", int(vendor.url.rsplit(":", 1)[1]))
        direct.request("POST", "/v1/messages", body=json.dumps({"stream": True}))
        assert body == direct.getresponse().read()  # byte for byte
        facts = relay.facts()
    assert status == 200
    [request] = facts.requests
    assert (request.method, request.path, request.model, request.ended) == (
        "POST",
        "/v1/messages",
        True,
        "answered",
    )
    assert request.content
    assert facts.content
    assert facts.responded
    assert "message_start" in request.events
    assert "content_block_start" in request.events
    assert request.usage is not None
    assert request.usage.input_tokens == 120
    assert facts.agent == "claude-cli/2.1.197"
    recorded = facts.model_dump_json()
    assert KEY not in recorded
    assert PROMPT not in recorded
    assert "hello there" not in recorded
    assert relay.account is not None
    assert KEY not in relay.account


def test_each_chunk_reaches_the_client_before_the_vendor_sends_the_next():
    release = threading.Event()

    def stream(conn: socket.socket, head: bytes) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        first = b"event: message_start\ndata: {}\n\n"
        conn.sendall(b"%x\r\n%s\r\n" % (len(first), first))
        release.wait(DEADLINE_S)  # the next chunk only after the client saw the first
        last = b"event: message_stop\ndata: {}\n\n"
        conn.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(last), last))

    with RawServer(stream) as vendor, Relay(vendor.url, {}) as relay:
        client = http.client.HTTPConnection("127.0.0.1", port_of(relay), timeout=DEADLINE_S)
        client.request("POST", "/v1/messages", body=b"{}")
        response = client.getresponse()
        assert b"message_start" in response.read1(65536)
        release.set()
        assert b"message_stop" in response.read()
        assert relay.facts().requests[0].ended == "answered"


def test_keep_alive_serves_several_requests_on_one_connection():
    with FakeVendor(sc.reply("one")) as vendor, Relay(vendor.url, {}) as relay:
        client = http.client.HTTPConnection("127.0.0.1", port_of(relay), timeout=DEADLINE_S)
        for _ in range(3):
            client.request("POST", "/v1/messages", body=b'{"stream": true}')
            assert client.getresponse().read()
        facts = relay.facts()
    assert facts.total == 3
    assert [r.ended for r in facts.requests] == ["answered"] * 3


def test_a_large_upload_arrives_whole():
    seen: list[str] = []

    def digest(conn: socket.socket, head: bytes) -> None:
        seen.append(hashlib.sha256(read_body(conn, head)).hexdigest())
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")

    body = bytes(range(256)) * (20 * 4096)  # 20 MiB
    with RawServer(digest) as vendor, Relay(vendor.url, {}) as relay:
        client = http.client.HTTPConnection("127.0.0.1", port_of(relay), timeout=DEADLINE_S)
        client.request("POST", "/upload", body=body)
        assert client.getresponse().read() == b"ok"
        [request] = relay.facts().requests
    assert seen == [hashlib.sha256(body).hexdigest()]
    assert request.bytes_up == len(body)
    assert not request.model


def test_a_vendor_nothing_listens_on_ends_connect_and_the_client_gets_no_response():
    with Relay(dead_url(), {}) as relay:
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            post(relay)
        [request] = relay.facts().requests
        assert (request.ended, request.detail) == ("connect", "ECONNREFUSED")
        assert relay.unreached
        assert not relay.responded


def test_a_name_that_does_not_resolve_ends_dns():
    with Relay("http://governor-relay-test.invalid", {}) as relay:
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            post(relay)
        assert relay.facts().requests[0].ended == "dns"


def test_a_tls_handshake_that_fails_ends_tls():
    def plain(conn: socket.socket, head: bytes) -> None:
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
        vendor.peer_closed(conn)  # closing first could reset the handshake instead

    with RawServer(plain, head=False) as vendor:
        https = vendor.url.replace("http://", "https://")
        with Relay(https, {}) as relay:
            with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
                post(relay)
            assert relay.facts().requests[0].ended == "tls"


def test_a_client_that_gives_up_before_any_byte_ends_timeout_and_the_vendor_is_told():
    vendor_side: list[socket.socket] = []

    def silent(conn: socket.socket, head: bytes) -> None:
        vendor_side.append(conn)
        server.peer_closed(conn)

    with RawServer(silent) as server, Relay(server.url, {}) as relay:
        client = socket.create_connection(("127.0.0.1", port_of(relay)))
        client.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}")
        wait_for(lambda: vendor_side, "the vendor got the request")
        client.close()
        assert server.closed.wait(DEADLINE_S)  # the vendor's connection was closed too
        wait_for(lambda: relay.facts().total == 1, "the exchange was recorded")
        [request] = relay.facts().requests
    assert request.ended == "timeout"
    assert request.ttfb_ms is None


def test_a_client_that_disconnects_mid_stream_is_passed_on_and_the_relay_stays_up():
    def endless(conn: socket.socket, head: bytes) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        event = b"event: ping\ndata: {}\n\n"
        try:
            while True:  # a never-ending stream
                conn.sendall(b"%x\r\n%s\r\n" % (len(event), event))
                time.sleep(0.005)
        except OSError:
            server.closed.set()

    with RawServer(endless) as server, Relay(server.url, {}) as relay:
        client = socket.create_connection(("127.0.0.1", port_of(relay)))
        client.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}")
        seen = b""
        while b"ping" not in seen:
            seen += client.recv(65536)
        client.close()
        assert server.closed.wait(DEADLINE_S)
        wait_for(lambda: relay.facts().total == 1, "the exchange was recorded")
        assert relay.facts().requests[0].ended == "abandoned"
        assert relay.facts().requests[0].events == ("ping",)


def test_a_close_mid_chunk_ends_broken_and_the_client_sees_it_broken():
    def cut(conn: socket.socket, head: bytes) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n40\r\nevent: message_start\n"
        )

    with RawServer(cut) as vendor, Relay(vendor.url, {}) as relay:
        with pytest.raises(http.client.IncompleteRead):
            post(relay)
        [request] = relay.facts().requests
    assert request.ended == "broken"
    assert request.ttfb_ms is not None
    assert relay.responded


def test_enormous_headers_malformed_json_and_invalid_utf8_never_take_the_relay_down():
    answers = iter(
        [
            b"HTTP/1.1 200 OK\r\nx-big: " + b"a" * (400 * 1024) + b"\r\n\r\n",
            b"HTTP/1.1 529 Overloaded\r\ncontent-type: application/json\r\n"
            b"content-length: 12\r\n\r\n{not json \xff\xfe",
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 24\r\n\r\n"
            b"event: \xff\xfe\ndata: {\xc3\x28}\n\n\x00\x01",
        ]
    )

    def bad(conn: socket.socket, head: bytes) -> None:
        conn.sendall(next(answers))

    with RawServer(bad) as vendor, Relay(vendor.url, {}) as relay:
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            post(relay)
        assert post(relay)[0] == 529
        assert post(relay)[0] == 200
        ends = [(r.ended, r.status, r.error_type) for r in relay.facts().requests]
    assert ends == [("reset", None, None), ("refused", 529, None), ("answered", 200, None)]


def test_a_malformed_request_is_answered_400_and_the_relay_stays_up():
    with FakeVendor(sc.reply("ok")) as vendor, Relay(vendor.url, {}) as relay:
        client = socket.create_connection(("127.0.0.1", port_of(relay)))
        client.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        assert client.recv(65536).startswith(b"HTTP/1.1 400")
        client.close()
        assert post(relay)[0] == 200


def test_an_http_upstream_is_reached_through_the_environment_proxy_with_its_credentials():
    with FakeVendor(sc.reply("through the proxy")) as vendor, HttpProxy() as proxy:
        env = {"HTTP_PROXY": proxy.url.replace("http://", "http://user:pw@")}
        with Relay(vendor.url, env) as relay:
            assert post(relay)[0] == 200
    assert proxy.lines == [f"POST {vendor.url}/v1/messages"]
    assert proxy.auth[0] is not None
    assert proxy.auth[0].startswith("Basic ")
    assert len(vendor.model_requests) == 1


def test_no_proxy_names_the_host_and_the_proxy_is_not_used():
    with FakeVendor(sc.reply("direct")) as vendor, HttpProxy() as proxy:
        env = {"HTTP_PROXY": proxy.url, "NO_PROXY": "localhost,127.0.0.1"}
        with Relay(vendor.url, env) as relay:
            assert post(relay)[0] == 200
    assert proxy.lines == []


def test_an_https_upstream_goes_through_connect_at_the_proxy():
    with HttpProxy() as proxy:
        env = {"HTTPS_PROXY": proxy.url}
        with Relay("https://127.0.0.1:9", env) as relay:  # the tunnel's target refuses
            with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
                post(relay)
            ended = relay.facts().requests[0].ended
    assert proxy.lines == ["CONNECT 127.0.0.1:9"]
    assert ended in ("connect", "tls")


def test_a_relay_that_cannot_start_is_an_uncharged_environment_failure():
    result = start_relay("ftp://nowhere.example", {})
    assert not isinstance(result, Relay)
    assert (result.failure_class, result.rule) == ("environment", "relay")
    assert (result.error or "").startswith("governor's relay could not start: ")
    assert result.evidence.effects == result.evidence.output == "absent"


def _raw_exchange(sock: socket.socket, body: bytes = b"{}") -> bytes:
    """Send one request on a raw socket and read until the response's framing could end it:
    everything the relay wrote (head and body as framed) up to a pause."""
    sock.sendall(
        b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    )
    data = b""
    while not data.endswith(b"\r\n\r\n") or data.count(b"\r\n\r\n") < 2:
        piece = sock.recv(65536)
        if not piece:
            break
        data += piece
    return data


def test_a_chunked_body_passes_framed_as_the_vendor_framed_it_and_keep_alive_holds():
    event = b"event: message_start\ndata: {}\n\n"
    framed = b"%x;ext=1\r\n%s\r\n0\r\nx-trailer: t\r\n\r\n" % (len(event), event)

    def chunked(conn: socket.socket, head: bytes) -> None:
        while head:
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\n\r\n" + framed
            )
            head = read_head(conn)

    with RawServer(chunked) as vendor, Relay(vendor.url, {}) as relay:
        with socket.create_connection(("127.0.0.1", port_of(relay)), timeout=DEADLINE_S) as sock:
            for _ in range(2):  # the second on the same connections, both sides
                answer = _raw_exchange(sock)
                assert answer.endswith(b"\r\n\r\n" + framed)
        facts = relay.facts()
    assert [r.ended for r in facts.requests] == ["answered", "answered"]
    assert facts.requests[0].events == ("message_start",)


def test_a_body_that_runs_to_the_close_tells_the_client_to_close():
    def until_close(conn: socket.socket, head: bytes) -> None:
        conn.sendall(b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{"a": 1}')
        conn.close()

    with RawServer(until_close) as vendor, Relay(vendor.url, {}) as relay:
        status, headers, body = post(relay)
        [request] = relay.facts().requests
    assert (status, body) == (200, b'{"a": 1}')
    assert headers.get("Connection") == "close"
    assert request.ended == "answered"


def test_a_chunk_size_that_is_not_hex_ends_broken_and_the_relay_stays_up():
    def bad(conn: socket.socket, head: bytes) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"
        )

    with RawServer(bad) as vendor, Relay(vendor.url, {}) as relay:
        with pytest.raises(http.client.HTTPException):
            post(relay)
        with pytest.raises(http.client.HTTPException):
            post(relay)  # still serving
        facts = relay.facts()
    assert [r.ended for r in facts.requests] == ["broken", "broken"]
    assert facts.failed is None


@pytest.mark.parametrize(
    "piece", [65536, 4096, 7], ids=["64k-pieces", "4k-pieces", "7-byte-pieces"]
)
def test_the_fast_scan_still_sees_an_error_event_among_many_deltas(piece: int) -> None:
    """The watcher skips blocks whose every event is of a kind it has seen and never
    parses; an ``error`` or a usage-bearing event in such a stream is still read, however
    the body is cut."""
    from governor.exec.relay_watch import Watch

    delta = b'event: content_block_delta\ndata: {"type":"content_block_delta"}\n\n'
    ping = b"event: ping\r\ndata: {}\r\n\r\n"
    usage = b'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":7}}\n\n'
    error = (
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
        b'"message":"Overloaded"}}\n\n'
    )
    body = delta * 2000 + ping * 50 + delta * 2000 + usage + delta * 500 + error + delta * 10
    watch = Watch("POST", "/v1/messages", time.monotonic)
    watch.head(200, {"content-type": "text/event-stream"}, time.time())
    for at in range(0, len(body), piece):
        watch.body(body[at : at + piece])
    request = watch.end("answered")
    assert request.ended == "refused"
    assert request.error_type == "overloaded_error"
    assert request.usage is not None
    assert request.usage.output_tokens == 7
    assert set(request.events) == {"content_block_delta", "ping", "message_delta", "error"}
    assert request.bytes_down == len(body)


def test_an_http_1_0_client_gets_the_payload_of_a_chunked_body_ended_by_the_close():
    event = b"event: message_start\ndata: {}\n\n"

    def chunked(conn: socket.socket, head: bytes) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
            b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(event), event, len(event), event)
        )

    with RawServer(chunked) as vendor, Relay(vendor.url, {}) as relay:
        with socket.create_connection(("127.0.0.1", port_of(relay)), timeout=DEADLINE_S) as sock:
            sock.sendall(b"POST /v1/messages HTTP/1.0\r\ncontent-length: 2\r\n\r\n{}")
            answer = b""
            while piece := sock.recv(65536):
                answer += piece
        [request] = relay.facts().requests
    head, _, body = answer.partition(b"\r\n\r\n")
    assert body == event * 2
    assert b"transfer-encoding" not in head.lower()
    assert b"connection: close" in head.lower()
    assert request.ended == "answered"
    assert request.events == ("message_start",)


def _scan_body() -> bytes:
    delta = b'event: content_block_delta\ndata: {"type":"content_block_delta"}\n\n'
    usage = b'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":7}}\n\n'
    error = (
        b'event: error\r\ndata: {"type":"error","error":{"type":"overloaded_error",'
        b'"message":"Overloaded"}}\r\n\r\n'
    )
    near = b"event: content_block_delta_late\ndata: {}\n\n"  # a known kind's name as prefix
    return delta * 300 + usage + delta * 300 + near + delta * 50 + error + delta * 5


def _watched(feed) -> object:  # type: ignore[no-untyped-def]
    from governor.exec.relay_watch import Watch

    watch = Watch("POST", "/v1/messages", time.monotonic)
    watch.head(200, {"content-type": "text/event-stream"}, time.time())
    feed(watch)
    return watch.end("answered")


def _check_scan(request) -> None:  # type: ignore[no-untyped-def]
    assert request.ended == "refused"
    assert request.error_type == "overloaded_error"
    assert request.usage is not None
    assert request.usage.output_tokens == 7
    assert set(request.events) == {
        "content_block_delta",
        "message_delta",
        "content_block_delta_late",
        "error",
    }
    assert request.bytes_down == len(_scan_body())


@pytest.mark.parametrize("marker", [b"event: message_delta", b"event: error", b"_late\n"])
def test_a_marker_cut_by_a_buffer_boundary_at_any_byte_is_still_read(marker: bytes) -> None:
    """Two buffers cut at every byte from just before the marker's event line to just
    after its event's blank line: the scan carries the partial event across the cut."""
    body = _scan_body()
    at = body.index(marker)
    for cut in range(at - 3, body.index(b"\n\n", at) + 6):
        _check_scan(_watched(lambda w, cut=cut: (w.body(body[:cut]), w.body(body[cut:]))))


@pytest.mark.parametrize("size", [61, 4096, 65536])
def test_the_scan_reads_chunk_payloads_in_place_inside_the_framed_buffer(size: int) -> None:
    """The watcher is handed each chunk's payload as bounds inside the buffer read from the
    vendor (size lines and line ends around it): events that start a chunk, and events cut
    by chunks and by reads, are all read, and no framing byte is taken for the body."""
    from governor.exec.relay_body import BodyEnd

    body = _scan_body()
    framed = b"".join(
        b"%x\r\n%s\r\n" % (len(body[at : at + size]), body[at : at + size])
        for at in range(0, len(body), size)
    )
    framed += b"0\r\n\r\n"

    def feed(watch) -> None:  # type: ignore[no-untyped-def]
        end = BodyEnd("chunked", 0, watch.body)
        for at in range(0, len(framed), 7000):
            end.feed(framed[at : at + 7000])
        assert end.done

    _check_scan(_watched(feed))
