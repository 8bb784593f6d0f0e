"""A small stand-in for the Hugging Face Hub on a loopback port, for tests that must not use the network.

It answers the few routes huggingface_hub calls when we check a submission (model info with file
sizes) and when the pre-flight worker fetches configs and reads safetensors headers (HEAD/GET
`resolve`, with ranges), with the Hub's real headers and error codes. The repositories it serves
are folders on disk, e.g. a tiny model built by tests/fakes/models.py. `hub.requests` lists every
request as "METHOD /path", so that tests can say what was (not) asked for.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse


@dataclass
class FakeRepo:
    folder: Path
    commit: str = ""
    branches: dict[str, str] = field(default_factory=dict)
    gated: bool = False
    license: str = "apache-2.0"
    # Pretend sizes for some files (e.g. to make a tiny model look too large), by file name.
    sizes: dict[str, int] = field(default_factory=dict)
    # Tags by name, and the main branch's history (newest first; the main commit is added first).
    tags: dict[str, str] = field(default_factory=dict)
    history: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.commit:
            digest = hashlib.sha1()
            for path in sorted(self.folder.rglob("*")):
                if path.is_file():
                    digest.update(path.relative_to(self.folder).as_posix().encode() + path.read_bytes())
            self.commit = digest.hexdigest()
        self.branches.setdefault("main", self.commit)
        if self.branches["main"] not in self.history:
            self.history.insert(0, self.branches["main"])

    def files(self) -> dict[str, Path]:
        return {
            path.relative_to(self.folder).as_posix(): path for path in sorted(self.folder.rglob("*")) if path.is_file()
        }

    def resolve(self, revision: str | None) -> str | None:
        revision = revision or "main"
        if revision in self.branches:
            return self.branches[revision]
        if revision in self.tags:
            return self.tags[revision]
        known = {self.commit, *self.history, *self.branches.values(), *self.tags.values()}
        return revision if revision in known else None

    def info(self, commit: str) -> dict:
        config_path = self.folder / "config.json"
        config = json.loads(config_path.read_text()) if config_path.is_file() else {}
        siblings = []
        for name, path in self.files().items():
            size = self.sizes.get(name, path.stat().st_size)
            sibling = {"rfilename": name, "size": size, "blobId": hashlib.sha1(path.read_bytes()).hexdigest()}
            if name.endswith(".safetensors"):
                sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
                sibling["lfs"] = {"size": size, "sha256": sha256, "pointerSize": 134}
            siblings.append(sibling)
        return {
            "_id": commit[:24],
            "id": "",
            "sha": commit,
            "private": False,
            "gated": False,
            "disabled": False,
            "library_name": "sentence-transformers",
            "tags": ["sentence-transformers"],
            "config": {key: config[key] for key in ("architectures", "model_type", "auto_map") if key in config},
            "cardData": {"license": self.license},
            "siblings": siblings,
        }


class FakeHub:
    def __init__(self) -> None:
        self.repos: dict[str, FakeRepo] = {}
        # Access tokens the Hub knows, with the user each belongs to: (name, organisations).
        self.tokens: dict[str, tuple[str, list[str]]] = {}
        self.requests: list[str] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        # shutdown() waits for the serving loop's next poll; the default half second adds up over the suite.
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def add(self, repo_id: str, folder: Path, **options) -> FakeRepo:
        repo = FakeRepo(Path(folder), **options)
        self.repos[repo_id] = repo
        return repo

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args) -> None:
                hub.requests.append(f"{self.command} {self.path}")

            def _error(self, status: int, code: str, message: str = "") -> None:
                body = json.dumps({"error": message or code}).encode()
                self.send_response(status)
                self.send_header("X-Error-Code", code)
                self.send_header("X-Error-Message", message or code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _json(self, payload: dict | list) -> None:
                body = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _find_repo(self, parts: list[str]) -> tuple[str, FakeRepo | None]:
                # The Hub finds a repository whatever the case of its id and answers with its own spelling.
                asked = "/".join(parts[:2]).lower()
                repo_id = next((known for known in hub.repos if known.lower() == asked), "/".join(parts[:2]))
                return repo_id, hub.repos.get(repo_id)

            def do_GET(self) -> None:
                self._route()

            def do_HEAD(self) -> None:
                self._route()

            def _route(self) -> None:
                path = urlparse(self.path).path
                # A revision such as refs/pr/7 arrives quoted as one part ("refs%2Fpr%2F7").
                parts = [unquote(part) for part in path.split("/") if part]
                if parts[:2] == ["api", "models"]:
                    return self._model_info(parts[2:])
                if parts == ["api", "whoami-v2"]:
                    return self._whoami()
                if len(parts) >= 5 and parts[2] == "resolve":
                    return self._resolve(parts)
                return self._error(404, "EntryNotFound", f"no route {path}")

            def _model_info(self, parts: list[str]) -> None:
                repo_id, repo = self._find_repo(parts)
                if repo is None:
                    return self._error(401, "RepoNotFound", "Repository not found")
                if repo.gated:
                    return self._error(401, "GatedRepo", "Access to this model is restricted")
                if len(parts) >= 4 and parts[2] == "tree":
                    return self._tree(repo, parts[3])
                if len(parts) == 3 and parts[2] == "refs":
                    return self._refs(repo)
                if len(parts) >= 4 and parts[2] == "commits":
                    return self._commits(repo, parts[3])
                revision = parts[3] if len(parts) >= 4 and parts[2] == "revision" else None
                commit = repo.resolve(revision)
                if commit is None:
                    return self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
                self._json({**repo.info(commit), "id": repo_id})

            def _whoami(self) -> None:
                token = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
                if token not in hub.tokens:
                    return self._error(401, "", "Invalid credentials in Authorization header")
                name, organisations = hub.tokens[token]
                self._json({"type": "user", "name": name, "orgs": [{"type": "org", "name": o} for o in organisations]})

            def _refs(self, repo: FakeRepo) -> None:
                def ref(name: str, kind: str, commit: str) -> dict:
                    return {"name": name, "ref": f"refs/{kind}/{name}", "targetCommit": commit}

                branches = [ref(n, "heads", c) for n, c in repo.branches.items() if not n.startswith("refs/")]
                tags = [ref(n, "tags", c) for n, c in repo.tags.items()]
                self._json({"branches": branches, "tags": tags, "converts": []})

            def _commits(self, repo: FakeRepo, revision: str) -> None:
                if revision not in repo.branches:
                    return self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
                ids = repo.history if revision == "main" else [repo.branches[revision]]
                when = "2026-01-01T00:00:00.000Z"
                self._json([{"id": c, "title": "", "message": "", "authors": [], "date": when} for c in ids])

            def _tree(self, repo: FakeRepo, revision: str) -> None:
                if repo.resolve(revision) is None:
                    return self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
                entries = []
                for name, path in repo.files().items():
                    data = path.read_bytes()
                    entry = {"type": "file", "path": name, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
                    if name.endswith(".safetensors"):
                        entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
                    entries.append(entry)
                self._json(entries)

            def _resolve(self, parts: list[str]) -> None:
                _, repo = self._find_repo(parts)
                if repo is None:
                    return self._error(401, "RepoNotFound", "Repository not found")
                if repo.gated:
                    return self._error(401, "GatedRepo", "Access to this model is restricted")
                commit = repo.resolve(parts[3])
                if commit is None:
                    return self._error(404, "RevisionNotFound", "Invalid rev id")
                name = "/".join(parts[4:])
                path = repo.files().get(name)
                if path is None:
                    return self._error(404, "EntryNotFound", f"{name} does not exist")
                data = path.read_bytes()
                status = 200
                byte_range = self.headers.get("Range")
                if byte_range and byte_range.startswith("bytes="):
                    start_text, _, end_text = byte_range[6:].partition("-")
                    start = int(start_text or 0)
                    end = min(int(end_text) if end_text else len(data) - 1, len(data) - 1)
                    data, status = data[start : end + 1], 206
                etag = hashlib.sha256(path.read_bytes()).hexdigest()
                self.send_response(status)
                self.send_header("X-Repo-Commit", commit)
                self.send_header("ETag", f'"{etag}"')
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Content-Type", "application/octet-stream")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

        return Handler

    def start(self) -> FakeHub:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def running_fake_hub() -> Iterator[FakeHub]:
    hub = FakeHub().start()
    try:
        yield hub
    finally:
        hub.stop()


def closed_port_url() -> str:
    """The URL of a loopback port that nothing listens on: connecting to it is refused at once."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"
