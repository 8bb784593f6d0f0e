"""Runs made directly in the database, for tests of pages and transitions that need no model."""

from __future__ import annotations

import uuid

from evaluation.models import Dataset, EmbeddingModel, Run


def make_run(dataset: Dataset, user=None, *, status: str = Run.Status.QUEUED, **fields) -> Run:
    model = EmbeddingModel.objects.create(name=f"test-org/model-{uuid.uuid4().hex[:8]}")
    fields.setdefault("resolved_commit", uuid.uuid4().hex)
    return Run.objects.create(model=model, dataset=dataset, submitted_by=user, status=status, **fields)
