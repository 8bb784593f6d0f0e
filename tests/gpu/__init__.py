"""Tests that run only on a machine with a CUDA device (marker `gpu`); elsewhere they are skipped and counted.

They are self-contained (no Django, no database), so that a GPU machine with only the engine's libraries
runs them with `pytest --noconftest -m gpu tests/gpu` (bench/gpu_session.sh).
"""
