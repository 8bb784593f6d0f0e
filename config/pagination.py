"""Paging of every API list: a cap on the page size, and a clear 400 for what is not a page.

`limit` is a whole number from 1 and `offset` one from 0; anything else (a word, a negative
number, a fraction) is refused with a 400 naming the parameter, as the schema says, rather than
quietly replaced by the default. Numbers above the cap are lowered to it: a client asking for
more rows than a page holds gets a full page and a `next` link.
"""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination

# Above this many rows a client pages; `?limit=` beyond it is lowered to it.
MAX_PAGE_SIZE = 1000
# Offsets beyond this are lowered to it: the databases' integers overflow on 20-digit offsets, and no
# table here comes near it.
MAX_OFFSET = 10**12


def whole_number(request, name: str, *, minimum: int, cap: int) -> int | None:
    """The query parameter `name` as a whole number from `minimum` (lowered to `cap`), None when absent."""
    raw = request.query_params.get(name)
    if raw is None:
        return None
    text = raw.strip()
    if not text.isascii() or not text.isdigit() or int(text) < minimum:
        raise ValidationError({name: [f"Give a whole number from {minimum}, not {raw[:40]!r}."]})
    return min(int(text), cap)


class CappedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = MAX_PAGE_SIZE

    def get_limit(self, request) -> int | None:
        limit = whole_number(request, self.limit_query_param, minimum=1, cap=MAX_PAGE_SIZE)
        return self.default_limit if limit is None else limit

    def get_offset(self, request) -> int:
        return whole_number(request, self.offset_query_param, minimum=0, cap=MAX_OFFSET) or 0

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        minimum = {self.limit_query_param: 1, self.offset_query_param: 0}
        for parameter in parameters:
            parameter["schema"]["minimum"] = minimum[parameter["name"]]
        return parameters
