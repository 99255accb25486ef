"""Errors the Qt-free core raises for bad input; each names the place of the problem."""

from __future__ import annotations


class DesignerError(Exception):
    """Bad input that a user can fix: the message names the file or item and the problem."""


class CatalogError(DesignerError):
    def __init__(self, source: str, part: str | None, field: str | None, problem: str):
        self.source, self.part, self.field, self.problem = source, part, field, problem
        where = source
        if part:
            where += f": part '{part}'"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {problem}")


class DesignError(DesignerError):
    """A design that breaks the model's rules (dangling link, unknown part, cycle, ...)."""
