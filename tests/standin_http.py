"""What the local stand-in API servers share: a JSON request handler that can drop a connection."""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

import pytest

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def keep_local(monkeypatch: pytest.MonkeyPatch, *more: str) -> None:
    """No proxy (nor any of `more`, e.g. a key or base URL) from the environment may redirect an SDK client
    away from a stand-in on 127.0.0.1."""
    for var in PROXY_VARS + more:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def full_name(model: str) -> str:
    """Ollama's canonical name: an untagged model means `:latest`."""
    return model if ":" in model else f"{model}:latest"


@dataclass(frozen=True)
class Recorded:
    """One request a stand-in received."""

    method: str
    path: str
    body: Any  # the parsed JSON body, or None
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names
    raw: str = ""  # the body as sent (decoded), for "this text never left" assertions


class JsonHandler(BaseHTTPRequestHandler):
    """Reads a JSON body, answers JSON; subclasses implement `serve(method)`."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.serve("GET")

    def do_POST(self) -> None:
        self.serve("POST")

    def serve(self, method: str) -> None:
        raise NotImplementedError

    def read_body(self) -> tuple[bytes, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return raw, (json.loads(raw) if raw else None)
        except ValueError:
            return raw, None

    def drop(self) -> None:
        """Close the connection without any answer (a crashed or restarted server)."""
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self.send_text(status, json.dumps(payload), "application/json", headers)

    def send_text(self, status: int, text: str, content_type: str, headers: dict[str, str] | None = None) -> None:
        data = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{content_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class StandInServer:
    """A threaded HTTP server on 127.0.0.1 (a free port) that records requests and counts down faults.

    Subclasses set their fault counters (named in FAULTS), then call `super().__init__` with their handler."""

    FAULTS: tuple[str, ...] = ()
    hang_seconds = 0.0

    def __init__(self, handler: type[BaseHTTPRequestHandler], name: str) -> None:
        self.requests: list[Any] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._server.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name=name, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes any handler that is hanging
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _take_fault(self) -> str | None:
        """Which fault (if any) the request now arriving gets; each one counts down."""
        with self._lock:
            for name in self.FAULTS:
                if getattr(self, name) > 0:
                    setattr(self, name, getattr(self, name) - 1)
                    return name
        return None

    def _record(self, entry: Any) -> None:
        with self._lock:
            self.requests.append(entry)

    def _hang(self) -> None:
        self._stopping.wait(self.hang_seconds)
