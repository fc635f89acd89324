"""`nilmbuild serve`: a local static file server (127.0.0.1 only) for the built site."""

from __future__ import annotations

import functools
import http.server
from pathlib import Path

from nilmbuild.errors import UserError


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".html": "text/html; charset=utf-8"}

    def log_message(self, format, *args):  # noqa: A002 - stdlib signature
        pass


def make_server(directory: str | Path, port: int = 8000) -> http.server.ThreadingHTTPServer:
    """A server for ``directory`` on 127.0.0.1:``port`` (0 = any free port); call ``serve_forever()``."""
    directory = Path(directory)
    if not (directory / "index.html").is_file():
        raise UserError(f"{directory}: no index.html; build the site first with `nilmbuild site --out {directory}`")
    handler = functools.partial(_QuietHandler, directory=str(directory))
    try:
        return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as e:
        raise UserError(f"cannot listen on 127.0.0.1:{port} ({e.strerror}); try another --port") from None


def url_of(server: http.server.HTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}/"
