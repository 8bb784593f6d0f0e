"""A model's address under /models/, from its public name. Pure Python, no Django."""

from __future__ import annotations

import re


def model_slug(public_name: str) -> str:
    """Lower case, "/" as "--", anything but letters, digits, dots, "-" and "_" as "-": BAAI/bge-m3 → baai--bge-m3."""
    return re.sub(r"[^a-z0-9._-]+", "-", public_name.lower().replace("/", "--")).strip("-") or "model"
