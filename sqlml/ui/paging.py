"""Pages of a long list (models, a model's versions): a browser builds a table of 100 rows
quickly and one of 1,000 slowly, so lists show PAGE_ROWS rows and link to the others."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar
from urllib.parse import urlencode

PAGE_ROWS = 100
T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """The rows of page ``number`` (from 1) of a list of ``total`` rows, the addresses of the
    pages before and after it (None: none), and the positions (from 1) of its first and last
    rows."""

    rows: Sequence[T]
    number: int
    total: int
    first: int
    last: int
    previous: str | None
    next: str | None


def page_number(text: str | None) -> int | None:
    """The page a query parameter asks for (None: not a page number)."""
    return int(text) if text and text.isdigit() and int(text) > 0 else None


def page_of(
    rows: Sequence[T], number: int, url: str, params: dict[str, str], size: int = PAGE_ROWS
) -> Page[T]:
    """Page ``number`` of ``rows`` (past the last: the last); the pages' addresses are ``url``
    with ``params`` (the filter's, say) and ``page``."""
    pages = max(1, -(-len(rows) // size))
    number = min(max(number, 1), pages)
    start = (number - 1) * size
    shown = rows[start : start + size]

    def address(to: int) -> str:
        return f"{url}?{urlencode({**{k: v for k, v in params.items() if v}, 'page': to})}"

    return Page(
        shown,
        number,
        len(rows),
        start + 1 if shown else 0,
        start + len(shown),
        address(number - 1) if number > 1 else None,
        address(number + 1) if number < pages else None,
    )
