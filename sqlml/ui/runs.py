"""Runs pages of sqlml ui (routes listed in ROUTES)."""

from starlette.routing import BaseRoute

ROUTES: list[BaseRoute] = []
