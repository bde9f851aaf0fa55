"""The one exception family of studykb; the CLI turns these into messages and exit codes."""

from __future__ import annotations


class StudyError(Exception):
    """A failure the user can act on. ``exit_code`` follows the command contract."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n{self.hint}"


class UsageError(StudyError):
    """Bad usage: a malformed query, an unknown option value. Exit 2."""

    exit_code = 2


class VaultError(StudyError):
    """No usable vault (missing folder, unreadable configuration). Exit 2."""

    exit_code = 2


class NotFound(StudyError):
    """A query that names no document. Exit 1, with suggestions."""

    exit_code = 1

    def __init__(self, query: str, suggestions: list[str]) -> None:
        hint = None
        if suggestions:
            hint = "Did you mean: " + ", ".join(suggestions) + "?"
        super().__init__(f"No document matches {query!r}.", hint=hint)
        self.query = query
        self.suggestions = suggestions


class DiskFull(StudyError):
    """No space left to write; what was there before is kept. Exit 1."""

    exit_code = 1
