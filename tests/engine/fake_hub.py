"""A local stand-in for the Hugging Face Hub's HTTP API, enough for huggingface_hub's real client code.

It serves model folders from disk at a fixed commit (model info, the file tree, HEAD/GET of files)
and answers unknown repositories and revisions with the Hub's 404 error-code headers, so the
engine's resolution, download and error handling run unchanged against it.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class HubHandler(BaseHTTPRequestHandler):
    repos: dict[str, tuple[str, dict[str, bytes]]] = {}
    requests: list[tuple[str, str]] = []

    def _send(self, code: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, payload: object) -> None:
        self._send(200, json.dumps(payload).encode(), {"Content-Type": "application/json"})

    def _answer(self) -> None:
        self.requests.append((self.command, self.path))
        path = self.path.split("?", 1)[0]
        for repo_id, (sha, files) in self.repos.items():
            api = f"/api/models/{repo_id}"
            if path.startswith(api + "/tree/"):
                tree = [
                    {"type": "file", "path": name, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
                    for name, data in files.items()
                ]
                return self._json(tree)
            if path == api or path.startswith(api + "/revision/"):
                revision = path[len(api + "/revision/") :] if "/revision/" in path else "main"
                if revision not in {"main", sha}:
                    return self._send(404, headers={"X-Error-Code": "RevisionNotFound"})
                return self._json({"id": repo_id, "sha": sha, "siblings": [{"rfilename": name} for name in files]})
            resolve = f"/{repo_id}/resolve/{sha}/"
            if path.startswith(resolve) and path[len(resolve) :] in files:
                data = files[path[len(resolve) :]]
                etag = '"' + hashlib.sha1(data).hexdigest() + '"'
                return self._send(200, data, {"X-Repo-Commit": sha, "ETag": etag})
        if path.startswith("/api/models/"):
            return self._send(404, headers={"X-Error-Code": "RepoNotFound"})
        return self._send(404, headers={"X-Error-Code": "EntryNotFound"})

    do_GET = _answer
    do_HEAD = _answer

    def log_message(self, *args) -> None:
        pass


@contextmanager
def fake_hub(repos: dict[str, tuple[str, Path]]) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """Serve {repo_id: (commit sha, folder)}; yields the endpoint URL and the list of requests seen."""
    served = {
        repo_id: (sha, {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()})
        for repo_id, (sha, folder) in repos.items()
    }
    handler = type("Handler", (HubHandler,), {"repos": served, "requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
