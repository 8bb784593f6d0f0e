"""Several hosts on the test machine: network namespaces joined to the root namespace by veth pairs.

Each host is a network namespace with one veth link to the root namespace (10.<net>.<n>.2 inside,
10.<net>.<n>.1 outside) and a default route through it. The root namespace plays the services'
machine: a password-protected Redis and an S3-compatible server (moto's server mode) bound to the
first link's outer address, which every namespace reaches through its own link. PostgreSQL keeps
listening on 127.0.0.1 only, as installed: a small TCP forwarder in the test process listens on that
same outer address and passes each connection to the real server, so nothing of the database's own
configuration changes for the test. Hosts share the file system (no mount namespace), so the test
gives each its own var/ folder and checks that nothing is shared through it.

Needs root and iproute2 (`ip netns`); `namespaces_problem()` says why a machine cannot make them.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _ip(*arguments: str, namespace: str | None = None) -> None:
    prefix = ["ip", "netns", "exec", namespace, "ip"] if namespace else ["ip"]
    subprocess.run([*prefix, *arguments], check=True, capture_output=True, text=True, timeout=30)


def namespaces_problem() -> str | None:
    """Why network namespaces cannot be made here (None when they can)."""
    if shutil.which("ip") is None:
        return "iproute2's `ip` is not installed"
    if os.geteuid() != 0:
        return "making network namespaces needs root (CI runs as root)"
    probe = f"nirdesha-probe-{os.getpid()}"
    try:
        _ip("netns", "add", probe)
    except (subprocess.CalledProcessError, OSError) as error:
        detail = getattr(error, "stderr", "") or str(error)
        return f"`ip netns add` failed: {detail.strip()}"
    _ip("netns", "delete", probe)
    return None


@dataclass
class Host:
    name: str
    namespace: str
    address: str
    outer_address: str
    var: Path
    processes: list[subprocess.Popen] = field(default_factory=list)

    def start(self, command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
        """Run a command on this host, in a session of its own so that `kill` reaches all it started."""
        handle = open(log, "w")  # noqa: SIM115 - closed when the process is reaped (stop_all).
        process = subprocess.Popen(
            ["ip", "netns", "exec", self.namespace, *command],
            cwd=ROOT,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        process.log_handle = handle  # type: ignore[attr-defined]
        self.processes.append(process)
        return process

    def kill(self) -> None:
        """Every process of this host dies at once, as when the machine loses power."""
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
        self.reap()

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        for process in self.processes:
            try:
                process.wait(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        self.reap()

    def reap(self) -> None:
        for process in self.processes:
            process.wait(timeout=30)
            process.log_handle.close()  # type: ignore[attr-defined]
        self.processes.clear()


@contextmanager
def hosts(names: list[str], base: Path) -> Iterator[dict[str, Host]]:
    """Namespaces named after this process, one per name, torn down (processes first) on the way out."""
    tag = os.getpid() % 100000
    network = free_network(tag)
    made: dict[str, Host] = {}
    try:
        for number, name in enumerate(names, start=1):
            namespace = f"nirdesha-{tag}-{name}"
            outer, inner = f"n{tag}{number}o", f"n{tag}{number}i"
            outer_address, address = f"10.{network}.{number}.1", f"10.{network}.{number}.2"
            _ip("netns", "add", namespace)
            made[name] = Host(name, namespace, address, outer_address, base / name / "var")
            _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            _ip("link", "set", inner, "netns", namespace)
            _ip("addr", "add", f"{outer_address}/24", "dev", outer)
            _ip("link", "set", outer, "up")
            _ip("addr", "add", f"{address}/24", "dev", inner, namespace=namespace)
            _ip("link", "set", inner, "up", namespace=namespace)
            _ip("link", "set", "lo", "up", namespace=namespace)
            _ip("route", "add", "default", "via", outer_address, namespace=namespace)
            made[name].var.mkdir(parents=True)
        yield made
    finally:
        for host in made.values():
            host.stop_all()
            # Deleting the namespace deletes its end of the veth pair, and with it the outer end.
            subprocess.run(["ip", "netns", "delete", host.namespace], capture_output=True, timeout=30)


def free_network(tag: int) -> int:
    """A second octet N whose 10.N.0.0/16 no interface of the machine uses (another test process's hosts
    included), tried from one that depends on `tag`."""
    used = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True, timeout=30).stdout
    for step in range(50):
        network = 200 + (tag + step) % 50
        if f" 10.{network}." not in used:
            return network
    raise RuntimeError("No free 10.200-249.x.x network for the test hosts")


def free_port(address: str) -> int:
    with socket.socket() as probe:
        probe.bind((address, 0))
        return int(probe.getsockname()[1])


class TcpForwarder:
    """Accepts connections on (address, port) and relays each one to `target`, both ways."""

    def __init__(self, address: str, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server((address, 0))
        self.port = int(self.listener.getsockname()[1])
        self.listener.settimeout(0.5)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            server = socket.create_connection(self.target, timeout=30)
            server.settimeout(None)
            client.settimeout(None)
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.stopping.set()
        self.listener.close()
        self.thread.join(timeout=5)


@contextmanager
def redis_with_password(address: str, password: str, log: Path) -> Iterator[int]:
    """A Redis of the test's own, answering only with the password, on the given address and loopback."""
    port = free_port(address)
    command = ["redis-server", "--port", str(port), "--bind", address, "127.0.0.1", "--requirepass", password]
    with open(log, "w") as handle:
        process = subprocess.Popen(
            [*command, "--save", "", "--appendonly", "no"], stdout=handle, stderr=subprocess.STDOUT
        )
        try:
            wait_for_port("127.0.0.1", port, process)
            yield port
        finally:
            process.terminate()
            process.wait(timeout=20)


@contextmanager
def s3_server(address: str, log: Path) -> Iterator[str]:
    """moto's S3-compatible server (`moto[server]`) as the object store; yields its endpoint URL."""
    port = free_port(address)
    with open(log, "w") as handle:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", address, "-p", str(port)],
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for_port(address, port, process)
            yield f"http://{address}:{port}"
        finally:
            process.terminate()
            process.wait(timeout=20)


def wait_for_port(address: str, port: int, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode} before it listened")
        try:
            socket.create_connection((address, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"Nothing listened on {address}:{port} within {timeout} s")


def wait_for_http(url: str, process: subprocess.Popen, timeout: float = 120) -> None:
    """Poll a URL until it answers 200 (the web host's /healthz: its database and broker are reachable)."""
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"The web server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except (OSError, urllib.error.URLError) as error:
            last = str(error)
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer 200 within {timeout} s: {last}")
