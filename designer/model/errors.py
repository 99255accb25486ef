"""Errors the Qt-free core raises for bad input; each names the place of the problem."""

from __future__ import annotations

# A refusal is one line a user reads whole: the file, the JSON path, the problem.
MAX_MESSAGE_CHARS = 300
_MAX_SOURCE_CHARS = 120


class DesignerError(Exception):
    """Bad input that a user can fix: the message names the file or item and the problem."""


class InputError(DesignerError):
    """Something from outside (a file, an option, a parameter) refused at the boundary: one line
    `SOURCE: $.json.path: problem`, at most MAX_MESSAGE_CHARS long."""

    def __init__(self, source: object, json_path: str | None, problem: str):
        self.source = printable(str(source)) if source else "<input>"
        self.json_path = printable(json_path) if json_path else None
        self.problem = printable(problem)
        super().__init__(one_line(self.source, self.json_path, self.problem))


class CatalogError(InputError):
    """A catalogue file refused: names the file (the user's own, for the user's parts) and the JSON path."""


class DesignError(DesignerError):
    """A design that breaks the model's rules (dangling link, unknown part, cycle, ...)."""


def printable(text: str) -> str:
    """Text safe to print on one line in any terminal: controls and unpaired surrogates escaped."""
    text = "".join(c if c.isprintable() else ("\\n" if c == "\n" else f"\\x{ord(c):02x}" if ord(c) < 0x100
                                                else f"\\u{ord(c):04x}") for c in text)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def one_line(source: str, json_path: str | None, problem: str) -> str:
    if len(source) > _MAX_SOURCE_CHARS:
        keep = _MAX_SOURCE_CHARS // 2 - 1
        source = source[:keep] + "…" + source[-keep:]
    where = f"{source}: {json_path}" if json_path else source
    message = f"{where}: {problem}"
    return message if len(message) <= MAX_MESSAGE_CHARS else message[:MAX_MESSAGE_CHARS - 1] + "…"
