"""The relay: a loopback HTTP/1.1 server owned by one agent call, between its CLI and its vendor.

Rules (SPEC §13.1; decision record 0027; docs/classification.md "Evidence from the wire"):
    * One relay per agent call, on ``127.0.0.1`` with an ephemeral port, serving from its
      own asyncio loop in a thread, so the synchronous harness uses it as a context
      manager: ``with Relay(base_url, env) as relay: … relay.url … relay.facts()``.
    * The CLI's base URL points at ``relay.url`` (the upstream's path kept). Every
      request is forwarded to the upstream (``governor.exec.relay_connect``), and every
      response streamed back as it arrives: each body chunk is written to the CLI before
      the next is read (server-sent events and chunked bodies unbuffered), request
      bodies forwarded piece by piece (large uploads), HTTP/1.1 keep-alive on both sides.
      Only a response's head is parsed: its body passes as the vendor framed it, byte for
      byte (``governor.exec.relay_body`` finds its end), except to an HTTP/1.0 client,
      which gets a chunked body's payload alone, ended by the close.
    * Hop-by-hop headers are not forwarded; ``Host`` names the upstream; everything else
      passes unchanged, credentials included — they are forwarded, never recorded.
    * A vendor that cannot be reached (DNS, TLS, refused), or that closes before any
      response byte, reaches the CLI as a connection closed without a response; a response
      broken mid-body reaches it broken (the relay closes the connection). A CLI that goes
      away is passed on: the upstream connection is closed. A CLI that gives up before any
      response byte ended the exchange ``timeout``.
    * Per request only metadata is recorded (``governor.exec.relay_watch``), as the core's
      ``WireFacts``; never a body, a prompt, a key or a credential-bearing header value.
    * Bad input never takes the relay down: a malformed request is answered 400 and
      closed, an enormous head (more than ``HEAD_LIMIT`` bytes) is refused, and anything
      else that goes wrong ends that connection only. If the relay itself fails, the call
      is told (``WireFacts.failed``).
    * ``gate`` (optional) is asked before each model request after the first, with the
      token usage the call's responses reported so far (None: none yet); when it answers
      a reason, the relay refuses the request itself (``refusal``) with a vendor-shaped
      error and marks the facts ``gated`` (the driver's gate: ``governor.drive.cost_gate``).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from types import TracebackType
from typing import Final, Protocol, runtime_checkable

import h11
import orjson

from governor.core.observation import (
    REQUESTS_KEPT,
    Usage,
    WireEnd,
    WireFacts,
    WireRequest,
    add_usage,
    counted,
)
from governor.exec.relay_body import BadFraming, BodyEnd, framing_of
from governor.exec.relay_connect import (
    Streams,
    Unreached,
    Upstream,
    connect,
    proxy_authorization,
    upstream_for,
)
from governor.exec.relay_watch import Watch, account_of, agent_of

HEAD_LIMIT: Final = 256 * 1024
"""The largest request or response head the relay accepts."""
READ_SIZE: Final = 256 * 1024
START_TIMEOUT_S: Final = 30.0
SETTLE_S: Final = 5.0
"""The longest ``facts`` waits for exchanges still being recorded (the CLI has exited)."""
HOP_BY_HOP: Final = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"proxy-authorization",
        b"proxy-authenticate",
        b"te",
        b"trailer",
        b"upgrade",
        b"host",
    }
)
Gate = Callable[[Usage | None], str | None]
"""Asked before each model request after the first, with the call's usage so far: a reason
to refuse it, or None."""


@runtime_checkable
class Gated(Protocol):
    """A harness whose relay asks a gate (``ClaudeHarness``, ``CodexHarness``)."""

    gate: Gate | None


class RelayError(Exception):
    """The relay could not start."""


class _Gone(Exception):
    """The CLI's side of an exchange went away."""


class Relay:
    """A loopback relay for one agent call (see the module rules)."""

    def __init__(self, base_url: str, env: Mapping[str, str], *, gate: Gate | None = None) -> None:
        """Args:
        base_url: the upstream's base URL (the profile's, or the vendor's default).
        env: the source environment (its proxy and CA settings are the CLI's).
        gate: asked before each model request after the first (a budget that bites).
        """
        self.upstream: Upstream = upstream_for(base_url, env)
        self.gate = gate
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)
        self._inflight = 0
        self._requests: list[WireRequest] = []
        self._total = 0
        self._models = 0
        self._responded = False
        self._content = False
        self._usage: Usage | None = None
        self._agent: str | None = None
        self._account: str | None = None
        self._gated = False
        self._failed: str | None = None
        self._unreached = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._start_error: BaseException | None = None
        self._port = 0
        self._tasks: set[asyncio.Task[None]] = set()

    # --- lifecycle -----------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL the CLI is given: ``http://127.0.0.1:PORT`` + the upstream's path."""
        return f"http://127.0.0.1:{self._port}{self.upstream.base_path}"

    def start(self) -> Relay:
        """Start serving in a thread; raises ``RelayError`` when it cannot."""
        self._thread = threading.Thread(target=self._serve, name="governor-relay", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise RelayError("it did not start listening within 30 s")
        if self._start_error is not None:
            raise RelayError(str(self._start_error) or type(self._start_error).__name__)
        return self

    def close(self) -> None:
        """Stop serving: open exchanges are cut, the thread ends."""
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            with contextlib.suppress(RuntimeError, TimeoutError):
                asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(START_TIMEOUT_S)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(loop.stop)
            thread.join(START_TIMEOUT_S)

    def __enter__(self) -> Relay:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            self._server = loop.run_until_complete(
                asyncio.start_server(self._client, "127.0.0.1", 0, limit=HEAD_LIMIT)
            )
            self._port = self._server.sockets[0].getsockname()[1]
        except OSError as exc:
            self._start_error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        except Exception as exc:  # the call is told, never crashed
            self._fail(f"the relay's loop failed: {type(exc).__name__}")
        finally:
            left = asyncio.all_tasks(loop)
            for task in left:
                task.cancel()
            if left:
                loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)

    # --- what was seen ---------------------------------------------------------------------

    @property
    def responded(self) -> bool:
        """Any response byte came back from the vendor in this call."""
        with self._lock:
            return self._responded

    @property
    def unreached(self) -> bool:
        """A request could not reach the vendor at all (DNS, TLS, refused)."""
        with self._lock:
            return self._unreached

    @property
    def account(self) -> str | None:
        """An opaque digest of the account the call's requests ran under."""
        with self._lock:
            return self._account

    def facts(self) -> WireFacts:
        """What the relay saw (SPEC §13.1), once the exchanges under way are recorded (at
        most ``SETTLE_S``: an agent that exited leaves none open for long)."""
        with self._settled:
            self._settled.wait_for(lambda: self._inflight == 0, SETTLE_S)
            return WireFacts(
                requests=tuple(self._requests[-REQUESTS_KEPT:]),
                total=counted(self._total),
                responded=self._responded,
                content=self._content,
                usage=self._usage,
                agent=self._agent,
                gated=self._gated,
                failed=self._failed,
            )

    def _fail(self, reason: str) -> None:
        with self._lock:
            self._failed = self._failed or reason[:100]

    def _record(self, request: WireRequest) -> None:
        with self._settled:
            self._settled.notify_all()
            self._requests.append(request)
            del self._requests[: -REQUESTS_KEPT * 2]
            self._total += 1
            self._responded = self._responded or request.ttfb_ms is not None
            self._content = self._content or request.content
            self._usage = add_usage(self._usage, request.usage)
            self._unreached = self._unreached or request.ended in ("dns", "tls", "connect")

    # --- one CLI connection ----------------------------------------------------------------

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        side = _ClientSide(reader, writer)
        upstream: _UpstreamSide | None = None
        try:
            while True:
                event = await side.next_event()
                if not isinstance(event, h11.Request):
                    break
                self._begin()
                try:
                    upstream = await self._exchange(side, event, upstream)
                finally:
                    self._end()
                if not side.next_cycle():
                    break
        except h11.RemoteProtocolError:
            side.refuse_bad_request()
        except (_Gone, ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            self._fail(f"the relay failed: {type(exc).__name__}")
        finally:
            if upstream is not None:
                upstream.close()
            side.close()
            if task is not None:
                self._tasks.discard(task)

    async def _exchange(
        self, side: _ClientSide, request: h11.Request, upstream: _UpstreamSide | None
    ) -> _UpstreamSide | None:
        """Forward one request and its response; the upstream connection to keep, if any."""
        if _head_size(request.headers) > HEAD_LIMIT:
            raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
        target = request.target.decode("latin-1")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in request.headers}
        watch = Watch(request.method.decode("latin-1"), target, time.monotonic)
        if watch.model:
            self._note_caller(headers)
            refusal = self._gated_reason()
            if refusal is not None:
                await side.drain_body()
                await side.send_refusal(refusal, watch.path)
                self._record(watch.end("refused", "governor's budget gate"))
                return upstream
        if upstream is None or not upstream.keep:
            if upstream is not None:
                upstream.close()
            try:
                upstream = _UpstreamSide(await connect(self.upstream))
            except Unreached as exc:
                await side.drain_body()
                self._record(watch.end(exc.how, exc.detail))
                side.must_close = True
                return None
        ended, detail = await self._forward(side, upstream, request, headers, watch)
        self._record(watch.end(ended, detail))
        if ended not in ("answered", "refused"):
            upstream.close()
            side.must_close = True
            return None
        return upstream

    def _begin(self) -> None:
        with self._settled:
            self._inflight += 1

    def _end(self) -> None:
        with self._settled:
            self._inflight -= 1
            self._settled.notify_all()

    def _note_caller(self, headers: dict[str, str]) -> None:
        with self._lock:
            self._models += 1
            self._agent = self._agent or agent_of(headers)
            self._account = self._account or account_of(headers)

    def _gated_reason(self) -> str | None:
        with self._lock:
            first = self._models <= 1
            usage = self._usage
        if first or self.gate is None:
            return None
        reason = self.gate(usage)
        if reason is not None:
            with self._lock:
                self._gated = True
        return reason

    async def _forward(
        self,
        side: _ClientSide,
        upstream: _UpstreamSide,
        request: h11.Request,
        headers: dict[str, str],
        watch: Watch,
    ) -> tuple[WireEnd, str | None]:
        """Send the request up, stream the response down; how the exchange ended."""
        target = request.target
        if self.upstream.proxy is not None and not self.upstream.tls:
            target = f"http://{self.upstream.authority}".encode() + target
        out = [(k, v) for k, v in request.headers if k.lower() not in HOP_BY_HOP]
        out.insert(0, (b"Host", self.upstream.authority.encode("latin-1")))
        if self.upstream.proxy is not None and not self.upstream.tls:
            auth = proxy_authorization(self.upstream.proxy)
            if auth:
                out.append((b"Proxy-Authorization", auth.encode("latin-1")))
        upstream.begin()
        try:
            await upstream.send(h11.Request(method=request.method, target=target, headers=out))
            async for piece in side.body():
                watch.bytes_up += len(piece)
                await upstream.send(h11.Data(data=piece))
            await upstream.send(h11.EndOfMessage())
        except (ConnectionError, OSError, h11.LocalProtocolError):
            return "reset", "the vendor closed the connection while the request was sent"
        return await self._respond(side, upstream, request, watch)

    async def _respond(  # noqa: PLR0911 - one return per way a response ends
        self, side: _ClientSide, upstream: _UpstreamSide, request: h11.Request, watch: Watch
    ) -> tuple[WireEnd, str | None]:
        waiting = asyncio.ensure_future(upstream.next_event())
        gone = asyncio.ensure_future(side.wait_gone())
        try:
            done, _ = await asyncio.wait({waiting, gone}, return_when=asyncio.FIRST_COMPLETED)
            if waiting not in done:
                return "timeout", "the agent gave up before any response byte"
            try:
                event = waiting.result()
                while isinstance(event, h11.InformationalResponse):
                    await side.send(event)
                    event = await upstream.next_event()
            except (ConnectionError, OSError, asyncio.IncompleteReadError):
                return "reset", "reset before any response byte"
            except h11.RemoteProtocolError:
                if upstream.closed:
                    return "reset", "closed before any response byte"
                return "reset", "a response head the relay could not read"
            except h11.LocalProtocolError:
                return "reset", "an informational response the agent could not take"
            if not isinstance(event, h11.Response):
                return "reset", "closed before any response byte"
            if _head_size(event.headers) > HEAD_LIMIT:
                return "reset", "a response head larger than the relay accepts"
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in event.headers}
            watch.head(event.status_code, headers, time.time())
            return await self._stream(side, upstream, request, event, watch=watch, gone=gone)
        finally:
            for task in (waiting, gone):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    async def _stream(  # noqa: PLR0911 - one return per way a response ends
        self,
        side: _ClientSide,
        upstream: _UpstreamSide,
        request: h11.Request,
        response: h11.Response,
        *,
        watch: Watch,
        gone: asyncio.Future[None],
    ) -> tuple[WireEnd, str | None]:
        """The response's head re-written without hop-by-hop fields, its body passed as the
        vendor framed it (``governor.exec.relay_body``): only the head is parsed. An
        HTTP/1.0 client cannot read chunks: it gets the payload alone, ended by the close."""
        framing, length = framing_of(request.method, response.status_code, response.headers)
        unchunk = framing == "chunked" and request.http_version != b"1.1"

        def payload(data: bytes, start: int, end: int) -> None:
            watch.body(data, start, end)
            side.write(data[start:end])

        body = BodyEnd(framing, length, payload if unchunk else watch.body)
        close = framing == "close" or _wants_close(request) or side.must_close
        side.must_close = close
        upstream.keep = not _wants_close(response) and response.http_version == b"1.1"
        try:
            side.write(_head(response, close, unchunk=unchunk))
        except (ConnectionError, OSError):
            return "abandoned", "the agent went away"
        data, eof = upstream.leftover()
        while True:
            try:
                used = body.feed(data)
            except BadFraming as exc:
                return "broken", str(exc)
            if gone.done():
                return "abandoned", "the agent went away"
            try:
                if used and not unchunk:
                    side.write(data if used == len(data) else data[:used])
                if used:
                    await side.writer.drain()
            except (ConnectionError, OSError):
                return "abandoned", "the agent went away"
            if body.done:
                upstream.keep = upstream.keep and used == len(data) and not eof
                side.raw_response_sent()
                return "answered", None
            if eof:
                upstream.keep = False
                if body.closed():
                    side.raw_response_sent()
                    return "answered", None
                return "broken", "closed mid-response"
            try:
                data = await upstream.reader.read(READ_SIZE)
            except (ConnectionError, OSError):
                return "broken", "reset mid-response"
            eof = not data


def _wants_close(message: h11.Request | h11.Response) -> bool:
    """The message asks to close its connection after it (HTTP/1.0, ``Connection: close``)."""
    if message.http_version != b"1.1":
        return True
    return any(
        name == b"connection" and b"close" in value.lower() for name, value in message.headers
    )


def _head(response: h11.Response, close: bool, *, unchunk: bool = False) -> bytes:
    """A response's head for the CLI: its status and fields, hop-by-hop fields left out
    (and ``Transfer-Encoding`` when the body goes unchunked)."""
    lines = [b"HTTP/1.1 %d %s\r\n" % (response.status_code, response.reason)]
    for name, value in response.headers.raw_items():
        dropped = unchunk and name.lower() == b"transfer-encoding"
        if name.lower() not in HOP_BY_HOP and not dropped:
            lines.append(b"%s: %s\r\n" % (name, value))
    if close:
        lines.append(b"Connection: close\r\n")
    lines.append(b"\r\n")
    return b"".join(lines)


def _head_size(headers: Iterable[tuple[bytes, bytes]]) -> int:
    """The bytes of a message's header fields (h11 bounds only an incomplete head)."""
    return sum(len(name) + len(value) + 4 for name, value in headers)


class _ClientSide:
    """The CLI's connection: h11 in server mode over asyncio streams."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=HEAD_LIMIT)
        self.must_close = False
        self._eof = False
        self._raw = False

    async def next_event(self) -> h11.Event | type[h11.PAUSED]:
        while True:
            event = self.conn.next_event()
            if event is not h11.NEED_DATA:
                return event  # type: ignore[return-value]
            if self._eof:
                return h11.ConnectionClosed()
            data = await self.reader.read(READ_SIZE)
            self._eof = not data
            self.conn.receive_data(data)

    async def body(self) -> AsyncIterator[bytes]:
        """The request body, piece by piece, as it arrives."""
        while True:
            event = await self.next_event()
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                return
            else:
                raise _Gone

    async def drain_body(self) -> None:
        async for _ in self.body():
            pass

    async def wait_gone(self) -> None:
        """Return when the CLI closes its side (bytes it sends meanwhile are kept)."""
        while not self._eof:
            data = await self.reader.read(READ_SIZE)
            if not data:
                self._eof = True
                return
            self.conn.receive_data(data)
        return

    async def send(self, event: h11.Event) -> None:
        data = self.conn.send(event)
        if data:
            self.writer.write(data)
            await self.writer.drain()

    def write(self, data: bytes) -> None:
        """Bytes of a response passed raw, h11 bypassed (``raw_response_sent`` when whole)."""
        self.writer.write(data)

    def raw_response_sent(self) -> None:
        """The response was written raw and whole: the exchange is over on this side."""
        self._raw = True

    async def send_refusal(self, reason: str, path: str) -> None:
        """A vendor-shaped refusal the CLI stops at (HTTP 400, not retried)."""
        body: dict[str, object]
        if path.endswith("/responses"):
            body = {
                "error": {
                    "type": "invalid_request_error",
                    "code": "budget_exhausted",
                    "message": reason,
                }
            }
        else:
            body = {"type": "error", "error": {"type": "invalid_request_error", "message": reason}}
        data = orjson.dumps(body)
        headers = [
            (b"Content-Type", b"application/json"),
            (b"Content-Length", str(len(data)).encode()),
        ]
        await self.send(h11.Response(status_code=400, headers=headers))
        await self.send(h11.Data(data=data))
        await self.send(h11.EndOfMessage())

    def next_cycle(self) -> bool:
        """Ready for the next request on this connection; False when it must close."""
        raw, self._raw = self._raw, False
        if self.must_close or self.conn.their_state is not h11.DONE:
            return False
        if raw:  # h11 never saw the response: a fresh state machine, with what it had read
            data, _ = self.conn.trailing_data
            self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=HEAD_LIMIT)
            if data:  # (empty data would tell h11 the CLI closed)
                self.conn.receive_data(data)
            return True
        if self.conn.our_state is not h11.DONE:
            return False
        self.conn.start_next_cycle()
        return True

    def refuse_bad_request(self) -> None:
        with contextlib.suppress(h11.LocalProtocolError, ConnectionError, OSError):
            if self.conn.our_state is h11.SEND_RESPONSE or self.conn.our_state is h11.IDLE:
                data = self.conn.send(
                    h11.Response(
                        status_code=400,
                        headers=[(b"Content-Length", b"0"), (b"Connection", b"close")],
                    )
                )
                self.writer.write((data or b"") + (self.conn.send(h11.EndOfMessage()) or b""))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()


class _UpstreamSide:
    """The vendor's connection: h11 in client mode for the request and the response head, a
    fresh state machine per exchange (the body passes raw: ``Relay._stream``)."""

    def __init__(self, streams: Streams) -> None:
        self.reader, self.writer = streams
        self.conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=HEAD_LIMIT)
        self.keep = False
        """The last exchange ended whole and both sides keep the connection alive."""
        self._eof = False
        self._used = False

    @property
    def closed(self) -> bool:
        """The vendor closed its side."""
        return self._eof

    def begin(self) -> None:
        """A new exchange on this connection."""
        if self._used:
            self.conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=HEAD_LIMIT)
        self._used, self.keep = True, False

    async def send(self, event: h11.Event) -> None:
        data = self.conn.send(event)
        if data:
            self.writer.write(data)
            await self.writer.drain()

    async def next_event(self) -> h11.Event:
        while True:
            event = self.conn.next_event()
            if event is not h11.NEED_DATA:
                return event  # type: ignore[return-value]
            if self._eof:
                return h11.ConnectionClosed()
            data = await self.reader.read(READ_SIZE)
            self._eof = not data
            self.conn.receive_data(data)

    def leftover(self) -> tuple[bytes, bool]:
        """The bytes read past the response head, and whether the vendor has closed."""
        data, _ = self.conn.trailing_data
        return data, self._eof

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()
