"""A user's RAG system behind HTTP, on 127.0.0.1, with one path per way of breaking."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

from tests.fakes.rag_systems import KNOWN_CHUNK, good
from tests.rag import own_chunking_system


TOKEN = "tok-7d41c0ffee-never-shown"  # what /secure wants after "Bearer "
HUGE_BYTES = 50_000_000


class FakeRagHttpServer:
    """``/canned`` answers with ``canned`` (bytes set by the test); ``/secure`` wants ``Bearer TOKEN``
    (``/echo-auth`` refuses and echoes the X-Api-Key header; ``/own-windows`` wants it too and answers as
    ``tests.rag.own_chunking_system.windows``); ``/echo-headers`` refuses an item whose id's characters sum odd,
    echoing the Authorization header whole, its credential alone, a Basic one decoded, and the header JSON-escaped
    (``/`` as ``\\/``) and URL-encoded, and answers the others quoting it;
    ``/echo-password`` answers as ``/own-windows`` does (no token), quoting the password of its Basic
    Authorization in the answer;
    ``/drip`` sends its body one byte every 2 s; ``/huge`` sends 50 MB (``/huge-undeclared``
    without a Content-Length)."""

    def __init__(self) -> None:
        self.hits: dict[str, int] = {}
        self.canned = b"{}"
        self.sent: dict[str, int] = {}
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:  # the client gave up (its deadline passed); nothing left to tell it
                    pass

            def _stream(self, path: str, total: int | None, pieces) -> None:
                """Without ``total`` the body has no Content-Length and ends when the server closes."""
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if total is not None:
                    self.send_header("Content-Length", str(total))
                self.end_headers()
                try:
                    for piece in pieces:
                        self.wfile.write(piece)
                        self.wfile.flush()
                        with server._lock:
                            server.sent[path] = server.sent.get(path, 0) + len(piece)
                except OSError:  # the client hung up, as it should
                    pass

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    count = server.hits[self.path] = server.hits.get(self.path, 0) + 1
                if self.path == "/canned":
                    self._send(200, server.canned)
                elif self.path == "/secure":
                    if self.headers.get("Authorization") == f"Bearer {TOKEN}":  # about the token, not chunks
                        self._send(200, json.dumps({**good(request), "retrieved": [], "citations": []}).encode())
                    else:
                        self._send(401, b'{"error": "bad or missing token"}')
                elif self.path == "/own-windows":  # a system with its own chunking, behind the token
                    if self.headers.get("Authorization") == f"Bearer {TOKEN}":
                        self._send(200, json.dumps(own_chunking_system.windows(request)).encode())
                    else:
                        self._send(401, b'{"error": "bad or missing token"}')
                elif self.path == "/echo-auth":  # a careless server that shows what it was sent
                    self._send(403, json.dumps({"got": self.headers.get("X-Api-Key")}).encode())
                elif self.path == "/echo-headers":  # half the items refused, echoing each form of what was sent
                    authorization = self.headers.get("Authorization", "")
                    credential = authorization.split()[-1] if authorization else ""
                    if sum(map(ord, request["item_id"])) % 2:
                        try:
                            decoded = base64.b64decode(credential).decode()
                        except ValueError:
                            decoded = ""
                        self._send(401, f"bad token {authorization} for user; X-Api-Key={self.headers.get('X-Api-Key')}"
                                        f" raw={credential} decoded={decoded} pw={decoded.partition(':')[2]}"
                                        f" json={json.dumps(authorization)[1:-1].replace('/', chr(92) + '/')}"
                                        f" url={quote(authorization, safe='')}".encode())
                    else:
                        self._send(200, json.dumps({"answer": f"ok, you are {credential}", "retrieved": [
                            {"text": f"totally unrelated text {authorization}"}]}).encode())
                elif self.path == "/echo-password":  # answers well, quoting the password of its Basic credential
                    credential = self.headers.get("Authorization", " ").split()[-1]
                    password = base64.b64decode(credential).decode().partition(":")[2]
                    answer = own_chunking_system.windows(request)
                    answer["answer"] += f" (you signed in with {password})"
                    self._send(200, json.dumps(answer).encode())
                elif self.path == "/drip":
                    def drip():
                        for byte in b'{"answer": "late"}':
                            time.sleep(2)
                            yield bytes([byte])
                    self._stream("/drip", 18, drip())
                elif self.path in ("/huge", "/huge-undeclared"):
                    self._stream(self.path, HUGE_BYTES if self.path == "/huge" else None,
                                 (b" " * 1_000_000 for _ in range(HUGE_BYTES // 1_000_000)))
                elif self.path == "/good":
                    self._send(200, json.dumps(good(request)).encode())
                elif self.path == "/flaky":
                    self._send(503 if count % 2 else 200, json.dumps(good(request)).encode())
                elif self.path == "/down":
                    self._send(500, b'{"error": "boom"}')
                elif self.path == "/slow":
                    time.sleep(2)
                    self._send(200, json.dumps(good(request)).encode())
                elif self.path == "/badjson":
                    self._send(200, b'{"answer": "trunc')
                elif self.path == "/unknown":
                    self._send(200, json.dumps({"answer": "x", "retrieved": [{"chunk_id": "ffffffffffffffff"}]}).encode())
                elif self.path == "/notfound":
                    self._send(404, b'{"error": "no such route"}')
                else:
                    self._send(400, b"{}")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeRagHttpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


__all__ = ["FakeRagHttpServer", "KNOWN_CHUNK", "TOKEN", "HUGE_BYTES"]
