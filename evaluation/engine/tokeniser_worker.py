"""Tokenising in worker processes, so that the interpreter driving an accelerator only drives it.

On a GPU, the forward pass of a small encoder is bound by the host: Python issues every kernel of
every layer, and the device waits on it (bench/results/h200-2026-11-27: the host took 0.52 s to issue
a 0.52 s pass). A producer *thread* tokenising ahead shares that interpreter's lock: the Rust
tokenizer releases it while it splits texts, but turning each text's encoding into token ids runs in
Python, and the two halves of the work then take turns. Here the Rust tokenizer (a copy of the
model's own, with its truncation and padding settings, as its JSON carries them) runs in worker
processes, and each chunk of texts comes back as two numpy arrays: every text's token ids laid end
to end (int32) and every text's length.

The workers are this file run as a script (`python -P tokeniser_worker.py`), talking pickles over
their standard input and output. multiprocessing's `spawn` would re-run the parent's main script in
every worker, and with it whatever that imports: on a GPU machine, a benchmark script imported the
engine, bm25s and, through bm25s, jax, whose CUDA start took the GPU's memory from the parent
(bench/results/h100-2026-11-27b). A forked child is no option either: one of a process whose Rust
tokenizer already ran loses its parallelism, and one of a process holding a CUDA context is unsafe.
So this file imports nothing but numpy and tokenizers (tokenizers only in a worker).
"""

from __future__ import annotations

import contextlib
import itertools
import pickle
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import IO, Any

import numpy as np


def batch_call(tokenizer: Any) -> Any:
    """A Rust tokenizer's batch call that skips character offsets (which the engine never reads), where it has one."""
    return getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)


def token_ids(tokenizer: Any, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(every text's ids end to end as int32, every text's length as int64) from a Rust tokenizer."""
    encodings = batch_call(tokenizer)(texts, add_special_tokens=True)
    lengths = np.fromiter((len(encoding) for encoding in encodings), dtype=np.int64, count=len(encodings))
    ids = np.fromiter(
        itertools.chain.from_iterable(encoding.ids for encoding in encodings), dtype=np.int32, count=int(lengths.sum())
    )
    return ids, lengths


class WorkerExited(RuntimeError):
    """A tokenizer worker process ended before answering (its traceback is on the parent's stderr)."""


class TokeniserPool:
    """Worker processes holding one Rust tokenizer, returning chunks of texts as (ids, lengths), in order.

    Chunks go to the workers in turn from a feeder thread, at most `ahead` of the results read, while
    the caller reads the results in order: neither side can block the other on a full pipe.
    """

    def __init__(self, tokenizer_json: str, workers: int) -> None:
        self.workers = workers
        # True once a worker has ended: the pool is closed and its owner tokenises on a thread instead.
        self.broken = False
        self._processes: list[subprocess.Popen[bytes]] = []
        try:
            for _ in range(workers):
                # -P: this file's folder (the engine's modules) is not put first on the worker's path.
                command = [sys.executable, "-P", __file__]
                process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                self._processes.append(process)
                self._send(process, tokenizer_json)
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _send(process: subprocess.Popen[bytes], item: Any) -> None:
        stream: IO[bytes] = process.stdin  # type: ignore[assignment]
        try:
            pickle.dump(item, stream, protocol=pickle.HIGHEST_PROTOCOL)
            stream.flush()
        except OSError as error:  # a broken pipe: the worker has ended
            raise WorkerExited(f"a tokenizer worker exited (code {process.poll()}): {error}") from None

    def _receive(self, worker: int) -> tuple[np.ndarray, np.ndarray]:
        try:
            answer: tuple[np.ndarray, np.ndarray] = pickle.load(self._processes[worker].stdout)  # type: ignore[arg-type]
        except (EOFError, OSError):
            self.broken = True
            raise WorkerExited(f"tokenizer worker {worker} exited (code {self._processes[worker].poll()})") from None
        return answer

    def tokenise(
        self, chunks: Iterable[list[str]], ahead: int | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Each chunk's (ids, lengths), in the chunks' order, with at most `ahead` chunks in flight."""
        slots = threading.Semaphore(ahead or 2 * self.workers)
        stop = threading.Event()
        sent: list[int] = []
        failure: list[BaseException] = []
        more = threading.Condition()

        def feed() -> None:
            try:
                for number, chunk in enumerate(chunks):
                    while not slots.acquire(timeout=0.1):
                        if stop.is_set():
                            return
                    if stop.is_set():
                        return
                    worker = number % self.workers
                    self._send(self._processes[worker], chunk)
                    with more:
                        sent.append(worker)
                        more.notify()
            except BaseException as error:
                if isinstance(error, WorkerExited):
                    self.broken = True
                failure.append(error)
            finally:
                with more:
                    sent.append(-1)
                    more.notify()

        feeder = threading.Thread(target=feed, name="tokeniser-feeder", daemon=True)
        feeder.start()
        unread = 0  # the position of the first chunk whose answer has not been read

        def next_worker() -> int:
            with more:
                more.wait_for(lambda: len(sent) > unread)
                return sent[unread]

        try:
            while (worker := next_worker()) >= 0:
                answer = self._receive(worker)
                unread += 1
                slots.release()
                yield answer
            if failure:
                raise failure[0]
        finally:
            stop.set()
            # A caller that stops early leaves answers unread. They are read (and dropped) in order
            # until the feeder has ended, so that a worker blocked on writing one does not keep the
            # feeder blocked on sending, and the next call's first answer is its own.
            try:
                while (worker := next_worker()) >= 0:
                    self._receive(worker)
                    unread += 1
                    slots.release()
            except WorkerExited:
                pass
            if self.broken:
                # A worker has ended: the others are stopped too, so that a feeder blocked on writing to
                # one of them (whose answer nobody will read) fails its write and ends.
                self.close(kill=True)
            feeder.join()

    def close(self, *, kill: bool = False) -> None:
        """End the workers: by closing their input (they finish what they hold), or at once with `kill`."""
        for process in self._processes:
            if kill and process.poll() is None:
                process.kill()
        for process in self._processes:
            if process.stdin is not None and not process.stdin.closed:
                # A worker that already exited has closed its end.
                with contextlib.suppress(OSError):
                    process.stdin.close()
        for process in self._processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()


def serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """A worker's loop: a tokenizer's JSON first, then lists of texts, each answered with (ids, lengths)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(pickle.load(requests))
    while True:
        try:
            texts = pickle.load(requests)
        except EOFError:
            return
        pickle.dump(token_ids(tokenizer, texts), answers, protocol=pickle.HIGHEST_PROTOCOL)
        answers.flush()


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
