"""Benchmark: what governor's relay adds to each request, side by side with a direct connection.

Run: ``.venv/bin/python -m bench.relay [--requests 400] [--megabytes 50] [--rounds 3]``

Method (figures go to docs/performance.md, "The relay"):
    One loopback vendor (a threaded raw-socket HTTP/1.1 server, keep-alive, in a process of
    its own) answers three routes. The same client code (a fresh process per measurement)
    reaches it directly and through one ``Relay`` (in the benchmark's process, as in a
    harness), rounds interleaved (direct, relay, direct, relay …); no two parts share a GIL:

    * ``/small``: a 200 JSON answer of 200 bytes; ``--requests`` requests on one kept-alive
      connection; the median time per request of each path and their difference (what the
      relay adds per request).
    * ``/stream``: a chunked server-sent-event answer whose first event is written at
      once; the time from sending the request to reading the first body byte (time to first
      streamed byte), median of ``--requests // 4`` requests.
    * ``/tokens``: 200 server-sent events, each its own chunk stamped with the machine's
      monotonic clock as the vendor sends it, 2 ms apart; the client reads each as it
      comes and takes the time since its stamp: the median per chunk of each path and
      their difference (what the relay adds to each streamed chunk).
    * ``/bulk``: a chunked body of ``--megabytes`` MB in 64 KiB chunks of SSE-shaped lines,
      read to its end; MB/s of each path and the ratio relay / direct. A third path reads
      it too: a bare byte pipe (``Pipe``: the relay's asyncio sockets and upstream reader,
      no HTTP and no watcher), the ceiling of any relay written this way on this machine.

    The bulk read is a client process of its own; the benchmark's process runs only the
    relay (or the pipe) meanwhile, so its CPU time (``time.process_time``) is the relay's
    CPU per stream, printed with the best round of each path beside the medians: the wall-clock
    ratio moves with the machine's load, the CPU figure does not. Last, the same body's
    framing is read and its events scanned in this process with no socket
    (``scan_cost``: ``BodyEnd`` and the watcher over 256 KiB reads): the part of the
    relay's CPU that is its own reading, beside the pipe's, which is the sockets'.

    Targets (issue 32): added latency median ≤ 1 ms, first byte within 1 ms, 50 MB
    throughput at least 0.8 of direct.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from typing import Final

from governor.exec.relay import Relay
from governor.exec.relay_body import BodyEnd
from governor.exec.relay_pieces import open_pieces
from governor.exec.relay_watch import Watch

SMALL: Final = b'{"type":"message","content":[{"type":"text","text":"' + b"x" * 140 + b'"}]}'
CHUNK: Final = (b"event: content_block_delta\ndata: " + b"y" * 200 + b"\n\n") * 280
"""About 64 KiB of SSE-shaped lines."""
TOKENS: Final = 200
TOKEN_GAP_S: Final = 0.002


def _serve(conn: socket.socket, megabytes: int) -> None:
    buffer = b""
    with conn:
        while True:
            while b"\r\n\r\n" not in buffer:
                data = conn.recv(65536)
                if not data:
                    return
                buffer += data
            head, _, buffer = buffer.partition(b"\r\n\r\n")
            path = head.split(b" ", 2)[1]
            if path == b"/small":
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\n\r\n%s" % (len(SMALL), SMALL)
                )
                continue
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\n\r\n"
            )
            if path == b"/stream":
                first = b"event: message_start\ndata: {}\n\n"
                conn.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(first), first))
                continue
            if path == b"/tokens":
                _tokens(conn)
                continue
            left = megabytes * 1_000_000
            while left > 0:
                piece = CHUNK[: min(len(CHUNK), left)]
                conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                left -= len(piece)
            conn.sendall(b"0\r\n\r\n")


def _tokens(conn: socket.socket) -> None:
    """``TOKENS`` events, each its own chunk stamped with the monotonic clock as it is sent,
    ``TOKEN_GAP_S`` apart (a model's token stream)."""
    for _ in range(TOKENS):
        event = b'event: content_block_delta\ndata: {"sent_ns": %d}\n\n' % time.monotonic_ns()
        conn.sendall(b"%x\r\n%s\r\n" % (len(event), event))
        time.sleep(TOKEN_GAP_S)
    conn.sendall(b"0\r\n\r\n")


class Vendor:
    """The loopback vendor of the benchmark (see the module's method)."""

    def __init__(self, megabytes: int) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.megabytes = megabytes
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=_serve, args=(conn, self.megabytes), daemon=True).start()


class Pipe:
    """A bare byte pipe to the vendor on a loop of its own: each connection's bytes pumped
    both ways as they come, through the relay's reader (``Pieces``), nothing parsed."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.loop = asyncio.new_event_loop()
        self.server = self.loop.run_until_complete(
            asyncio.start_server(self._client, "127.0.0.1", 0, limit=1 << 20)
        )
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server.sockets[0].getsockname()[1])

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await open_pieces(
            "127.0.0.1", self.upstream, limit=1 << 20, context=None, server_hostname=None
        )
        await asyncio.gather(
            _pump(reader, up_writer), _pump(up_reader, writer), return_exceptions=True
        )

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(256 * 1024):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()


def per_request(port: int, n: int) -> float:
    """Median seconds per small request on one kept-alive connection."""
    client = http.client.HTTPConnection("127.0.0.1", port)
    times = []
    for _ in range(n):
        began = time.perf_counter()
        client.request("POST", "/small", body=b"{}")
        client.getresponse().read()
        times.append(time.perf_counter() - began)
    client.close()
    return statistics.median(times)


def first_byte(port: int, n: int) -> float:
    """Median seconds from sending a streamed request to its first body byte."""
    client = http.client.HTTPConnection("127.0.0.1", port)
    times = []
    for _ in range(n):
        began = time.perf_counter()
        client.request("POST", "/stream", body=b"{}")
        response = client.getresponse()
        response.read1(1)
        times.append(time.perf_counter() - began)
        response.read()
    client.close()
    return statistics.median(times)


def per_chunk(port: int) -> float:
    """Median seconds from the vendor sending an SSE chunk to the client reading it (one
    clock: ``CLOCK_MONOTONIC`` is the machine's, shared by the two processes)."""
    client = http.client.HTTPConnection("127.0.0.1", port)
    client.request("POST", "/tokens", body=b"{}")
    response = client.getresponse()
    delays, buffer = [], b""
    while piece := response.read1(65536):
        now = time.monotonic_ns()
        buffer += piece
        *events, buffer = buffer.split(b"\n\n")
        for event in events:
            sent = int(event.rsplit(b'"sent_ns": ', 1)[1].rstrip(b"}"))
            delays.append((now - sent) / 1e9)
    client.close()
    assert len(delays) == TOKENS, len(delays)
    return statistics.median(delays)


def throughput(port: int, megabytes: int) -> float:
    """MB/s of one streamed body of ``megabytes`` MB."""
    client = http.client.HTTPConnection("127.0.0.1", port)
    began = time.perf_counter()
    client.request("POST", "/bulk", body=b"{}")
    response = client.getresponse()
    total = 0
    while piece := response.read1(1 << 20):
        total += len(piece)
    elapsed = time.perf_counter() - began
    client.close()
    assert total == megabytes * 1_000_000, total
    return megabytes / elapsed


def scan_cost(megabytes: int, rounds: int) -> tuple[float, float]:
    """CPU seconds (median of ``rounds``) to read the bulk body's chunked framing alone, and
    to read it with the watcher scanning its events, over 256 KiB reads, no socket."""
    left, frames = megabytes * 1_000_000, []
    while left > 0:
        piece = CHUNK[: min(len(CHUNK), left)]
        frames.append(b"%x\r\n%s\r\n" % (len(piece), piece))
        left -= len(piece)
    framed = b"".join([*frames, b"0\r\n\r\n"])
    reads = [framed[at : at + 256 * 1024] for at in range(0, len(framed), 256 * 1024)]

    def once(watched: bool) -> float:
        watch = Watch("POST", "/v1/messages", time.monotonic)
        watch.head(200, {"content-type": "text/event-stream"}, time.time())
        end = BodyEnd("chunked", 0, watch.body if watched else lambda data, start, stop: None)
        began = time.process_time()
        for data in reads:
            end.feed(data)
        assert end.done
        assert not watched or watch.bytes_down == megabytes * 1_000_000
        return time.process_time() - began

    return (
        statistics.median(once(False) for _ in range(rounds)),
        statistics.median(once(True) for _ in range(rounds)),
    )


def measure(port: int, requests: int, megabytes: int, part: str) -> dict[str, float]:
    """The measurements of ``part`` against ``port`` (run in a client process of its own)."""
    if part == "bulk":
        return {"mbps": throughput(port, megabytes)}
    return {
        "request": per_request(port, requests),
        "first": first_byte(port, max(requests // 4, 10)),
        "chunk": per_chunk(port),
    }


def _child(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bench.relay", *args], stdout=subprocess.PIPE, text=True
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--megabytes", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve-vendor", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--client", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--part", default="latency", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_vendor:  # the vendor in a process of its own
        vendor = Vendor(args.megabytes)
        print(vendor.port, flush=True)
        threading.Event().wait()
    if args.client is not None:  # the client in a process of its own
        print(json.dumps(measure(args.client, args.requests, args.megabytes, args.part)))
        return
    run(args)


def run(args: argparse.Namespace) -> None:
    """Vendor, relay and client each in its own process: no GIL shared between them."""
    vendor = _child("--serve-vendor", "--megabytes", str(args.megabytes))
    assert vendor.stdout is not None
    port = int(vendor.stdout.readline())
    results: dict[str, list[dict[str, float]]] = {"direct": [], "relay": [], "pipe": []}
    cpu: list[float] = []
    pipe = Pipe(port)
    pipe_cpu: list[float] = []
    try:
        with Relay(f"http://127.0.0.1:{port}", {}) as relay:
            relay_port = int(relay.url.rsplit(":", 1)[1])
            for _ in range(args.rounds):
                for name, target in (("direct", port), ("relay", relay_port)):
                    row: dict[str, float] = {}
                    for part in ("latency", "bulk"):
                        began = time.process_time()  # this process runs only the relay
                        row |= _client(target, args, part)
                        if name == "relay" and part == "bulk":
                            cpu.append(time.process_time() - began)
                    results[name].append(row)
                began = time.process_time()  # … or only the pipe
                results["pipe"].append(_client(pipe.port, args, "bulk"))
                pipe_cpu.append(time.process_time() - began)
    finally:
        pipe.close()
        vendor.kill()
    report(args, results, cpu, pipe_cpu)


def _client(target: int, args: argparse.Namespace, part: str) -> dict[str, float]:
    client = _child(
        "--client",
        str(target),
        "--requests",
        str(args.requests),
        "--megabytes",
        str(args.megabytes),
        "--part",
        part,
    )
    out, _ = client.communicate(timeout=600)
    parsed: dict[str, float] = json.loads(out)
    return parsed


def report(
    args: argparse.Namespace,
    results: dict[str, list[dict[str, float]]],
    cpu: list[float],
    pipe_cpu: list[float],
) -> None:
    """Medians of the rounds, the best stream of each path, and the relay's CPU per MB."""
    med = {n: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for n, rs in results.items()}
    best = {n: max(r["mbps"] for r in rs) for n, rs in results.items()}
    d, r = med["direct"], med["relay"]
    print(f"rounds {args.rounds}, {args.requests} small requests, {args.megabytes} MB body")
    print(f"{'':28}{'direct':>12}{'relay':>12}{'added / ratio':>16}")
    print(
        f"{'per request (median, ms)':28}{d['request'] * 1e3:12.3f}{r['request'] * 1e3:12.3f}"
        f"{(r['request'] - d['request']) * 1e3:13.3f} ms"
    )
    print(
        f"{'first streamed byte (ms)':28}{d['first'] * 1e3:12.3f}{r['first'] * 1e3:12.3f}"
        f"{(r['first'] - d['first']) * 1e3:13.3f} ms"
    )
    print(
        f"{'per SSE chunk (median, ms)':28}{d['chunk'] * 1e3:12.3f}{r['chunk'] * 1e3:12.3f}"
        f"{(r['chunk'] - d['chunk']) * 1e3:13.3f} ms"
    )
    print(
        f"{'stream (MB/s, median)':28}{d['mbps']:12.1f}{r['mbps']:12.1f}{r['mbps'] / d['mbps']:14.2f}x"
    )
    print(
        f"{'stream (MB/s, best round)':28}{best['direct']:12.1f}{best['relay']:12.1f}"
        f"{best['relay'] / best['direct']:14.2f}x"
    )
    pipe = statistics.median(r["mbps"] for r in results["pipe"])
    print(
        f"{'stream, bare pipe (median)':28}{d['mbps']:12.1f}{pipe:12.1f}{pipe / d['mbps']:14.2f}x"
    )
    for name, used in (("relay", statistics.median(cpu)), ("pipe", statistics.median(pipe_cpu))):
        print(
            f"{name} CPU per {args.megabytes} MB stream: {used * 1e3:.1f} ms (median), "
            f"{args.megabytes / used:.0f} MB per CPU-second"
        )
    framing, watched = scan_cost(args.megabytes, max(args.rounds, 3))
    print(
        f"in process, no socket: framing alone {framing * 1e3:.1f} ms, framing and the "
        f"watcher's scan {watched * 1e3:.1f} ms per {args.megabytes} MB"
    )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
