"""The pure rules of a run's life (evaluation/lifecycle.py) and the one out-of-memory test."""

from __future__ import annotations

import pytest
import torch

from evaluation.engine.errors import is_out_of_memory
from evaluation.lifecycle import (
    LOG_TAIL_LINES,
    LogTail,
    Throttle,
    next_batch_size,
    overall_percent,
    stage_remaining_seconds,
)


def test_it_maps_stage_progress_onto_one_bar():
    assert overall_percent("PREFLIGHT", 0) == 0
    assert overall_percent("DOWNLOADING", 0) == overall_percent("PREFLIGHT", 1) == 5
    assert overall_percent("ENCODING", 0.5) == 47.5
    assert overall_percent("SCORING", 1) == 100
    assert overall_percent("ENCODING", 7) == overall_percent("SCORING", 0)  # Clamped to the stage.
    with pytest.raises(ValueError, match="Unknown stage"):
        overall_percent("TRAINING", 0.5)


def test_it_halves_the_batch_down_to_one():
    sizes = [64]
    while (smaller := next_batch_size(sizes[-1])) is not None:
        sizes.append(smaller)
    assert sizes == [64, 32, 16, 8, 4, 2, 1]
    assert next_batch_size(3) == 1


def test_it_recognises_running_out_of_memory():
    assert is_out_of_memory(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    cpu_message = "[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory"
    assert is_out_of_memory(RuntimeError(cpu_message))
    assert is_out_of_memory(MemoryError())
    assert not is_out_of_memory(RuntimeError("mat1 and mat2 shapes cannot be multiplied"))
    assert not is_out_of_memory(ValueError("out of memory"))


def test_it_keeps_only_the_last_lines_of_the_log():
    tail = LogTail("old 1\nold 2")
    for number in range(LOG_TAIL_LINES + 10):
        tail.append(f"line {number}")
    tail.append("traceback\n  frame\n  error")
    lines = tail.text().splitlines()
    assert len(lines) == LOG_TAIL_LINES
    assert lines[-3:] == ["traceback", "  frame", "  error"]
    assert "old 1" not in lines


def test_it_throttles_writes_to_one_per_interval():
    now = [100.0]
    throttle = Throttle(1.0, clock=lambda: now[0])
    answers = []
    for step in range(30):
        now[0] = 100.0 + step * 0.1
        answers.append(throttle.ready())
    assert answers.count(True) == 3  # At 100.0, 101.0 and 102.0 (±float rounding: 3 within 2.9 s).
    throttle.mark()
    assert not throttle.ready()


def test_it_estimates_what_is_left_of_a_stage_at_its_pace_so_far():
    # Encoding spans 10 % to 85 %: at 47.5 % it is half done; after 30 s, 30 s remain.
    assert stage_remaining_seconds("ENCODING", 47.5, 30.0) == pytest.approx(30.0)
    assert stage_remaining_seconds("SCORING", 100.0, 12.0) == 0.0
    # Too little of the stage behind it (or too short a time) to tell, and no estimate for a stage without a span.
    assert stage_remaining_seconds("ENCODING", 10.5, 30.0) is None
    assert stage_remaining_seconds("ENCODING", 47.5, 2.0) is None
    assert stage_remaining_seconds("QUEUED", 0.0, 30.0) is None
