"""The widget pages and the libraries' dist files, served on 127.0.0.1 by a real HTTP server.

``make widgets`` (part of ``make test``) installs the libraries pinned in
tests/widgets/package.json (and its package-lock.json) from npm into ``.cache/widgets``
(gitignored). Each page in ``pages/`` loads one library from ``/m/<package>/<file>``,
as a site would from its own copy of the dist files; ES-module libraries get an import
map (``{{IMPORTMAP}}`` in a page) built from the packages' own ``exports``. The API
explorer's page reads ``/api/openapi.json`` and its "Try it out" calls ``/api/pets``.

    with serve_widgets() as site:      # skips (fails in CI) when they are not installed
        url = site + "/sortable.html"
"""

from __future__ import annotations

import http.server
import json
import mimetypes
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from tests.support.net import serve_http

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PAGES = HERE / "pages"
CACHE = REPO / ".cache" / "widgets"


def modules_dir() -> Path:
    override = os.environ.get("BROWSERDECK_WIDGETS")
    return Path(override) if override else CACHE / "node_modules"


def missing() -> str | None:
    """Why the widget libraries cannot be served here, or None when they can."""
    wanted = json.loads((HERE / "package.json").read_text())["dependencies"]
    folder = modules_dir()
    for name, version in wanted.items():
        manifest = folder / name / "package.json"
        found = json.loads(manifest.read_text()).get("version") if manifest.is_file() else None
        if found == version:
            continue
        if shutil.which("npm") is None:
            return "npm is not installed, so the widget libraries could not be installed"
        if found is None:
            return f"{name} is not installed in {folder}: run `make widgets`"
        return f"{name} {found} is installed in {folder}, {version} is pinned: run `make widgets`"
    return None


def _entry(package: Path) -> str | None:
    """The browser ES-module entry of an installed package (its ``exports`` or ``module``)."""
    meta = json.loads((package / "package.json").read_text())
    exports = meta.get("exports")
    if isinstance(exports, dict) and "." in exports:
        exports = exports["."]
    if isinstance(exports, dict):
        exports = exports.get("import") or exports.get("default")
    if isinstance(exports, dict):
        exports = exports.get("default")
    entry = exports if isinstance(exports, str) else meta.get("module")
    return str(entry).removeprefix("./") if entry else None


def import_map(folder: Path) -> str:
    """Bare specifier -> file, for every installed package with an ES-module entry."""
    imports: dict[str, str] = {}
    for manifest in sorted(folder.glob("*/package.json")) + sorted(
        folder.glob("@*/*/package.json")
    ):
        package = manifest.parent
        name = package.relative_to(folder).as_posix()
        entry = _entry(package)
        if entry and entry.endswith(("js", "mjs")):
            imports[name] = f"/m/{name}/{entry}"
    return json.dumps({"imports": imports}, indent=1)


PETS = [
    {"id": 1, "name": "Rex", "kind": "dog"},
    {"id": 2, "name": "Tom", "kind": "cat"},
    {"id": 3, "name": "Nemo", "kind": "fish"},
]

OPENAPI = {
    "openapi": "3.0.3",
    "info": {"title": "Pet store", "version": "1.0.0", "description": "A small pet API."},
    "servers": [{"url": "/api"}],
    "paths": {
        "/pets": {
            "get": {
                "summary": "List pets",
                "operationId": "listPets",
                "parameters": [
                    {
                        "name": "kind",
                        "in": "query",
                        "description": "only pets of this kind",
                        "schema": {"type": "string"},
                    }
                ],
                "responses": {"200": {"description": "the pets"}},
            },
            "post": {
                "summary": "Add a pet",
                "operationId": "addPet",
                "responses": {"201": {"description": "added"}},
            },
        },
        "/pets/{petId}": {
            "get": {
                "summary": "Show one pet",
                "operationId": "showPet",
                "parameters": [
                    {"name": "petId", "in": "path", "required": True, "schema": {"type": "integer"}}
                ],
                "responses": {"200": {"description": "the pet"}},
            }
        },
    },
}


class _Handler(http.server.BaseHTTPRequestHandler):
    folder: Path = CACHE / "node_modules"
    imports: str = "{}"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=3600")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        query = urlsplit(self.path).query
        if path == "/favicon.ico":
            self._send(204, b"", "image/x-icon")
            return
        if path == "/api/openapi.json":
            self._send(200, json.dumps(OPENAPI).encode(), "application/json")
            return
        if path == "/api/pets":
            kind = dict(p.split("=", 1) for p in query.split("&") if "=" in p).get("kind")
            pets = [p for p in PETS if kind in (None, "", p["kind"])]
            self._send(200, json.dumps(pets).encode(), "application/json")
            return
        if path.startswith("/m/"):
            file = (self.folder / path[3:]).resolve()
            if self.folder.resolve() not in file.parents or not file.is_file():
                self._send(404, b"not found", "text/plain")
                return
            kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
            if file.suffix in (".js", ".mjs"):
                kind = "text/javascript"
            self._send(200, file.read_bytes(), kind)
            return
        page = PAGES / path.lstrip("/")
        if path.endswith(".html") and page.is_file() and page.parent == PAGES:
            html = page.read_text().replace("{{IMPORTMAP}}", self.imports)
            self._send(200, html.encode(), "text/html; charset=utf-8")
            return
        self._send(404, b"not found", "text/plain")


@contextmanager
def serve_widgets(folder: Path | None = None) -> Iterator[str]:
    """The widget site on a free loopback port; its base URL."""
    folder = folder or modules_dir()
    handler = type("Handler", (_Handler,), {"folder": folder, "imports": import_map(folder)})
    with serve_http(handler, "widget-site") as url:
        yield url
