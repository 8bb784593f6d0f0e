"""Paging of every API list: a cap on the page size, and no error on absurd numbers."""

from __future__ import annotations

from rest_framework.pagination import LimitOffsetPagination

# Above this many rows a client pages; `?limit=` beyond it is lowered to it.
MAX_PAGE_SIZE = 1000
# Offsets beyond this are lowered to it: the databases' integers overflow on 20-digit offsets, and no
# table here comes near it.
MAX_OFFSET = 10**12


class CappedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = MAX_PAGE_SIZE

    def get_offset(self, request) -> int:
        return min(super().get_offset(request), MAX_OFFSET)
