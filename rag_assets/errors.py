"""Domain exceptions.

Every message names what a user needs to find the problem (file, row, field), because these
messages travel unchanged into failed Dagster runs and check metadata; so a secret (an API key, a
token a server echoed back) is blanked out of a message with ``redact`` where the message is made.
"""


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every occurrence of each (non-empty) secret replaced by ``***``; pass the longest first
    when one secret may contain another."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


class RagAssetsError(Exception):
    """Base class of every error the domain core raises on purpose."""


class CorpusError(RagAssetsError):
    """The corpus root cannot be snapshotted at all (missing, empty, not a folder)."""


class ConfigError(RagAssetsError):
    """A setting or environment variable has a value the project cannot use."""


class StoreUnavailable(RagAssetsError):
    """The store's database cannot be used as it is (disk full, read-only, corrupt, locked by another
    process): the message is one line naming the file and what to do; the failed transaction wrote nothing."""


class ReviewFileRejected(RagAssetsError):
    """A review file failed validation; nothing from it is applied. ``problems`` name row and field."""

    def __init__(self, path: str, problems: list) -> None:
        self.path = path
        self.problems = problems
        shown = "\n".join(f"  - {p}" for p in problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(f"{path} rejected ({len(problems)} problem(s)):\n{shown}{more}")

    def first_line(self) -> str:
        """The file and its first problem, on one line, with how many more there are."""
        more = f" (and {len(self.problems) - 1} more problem(s))" if len(self.problems) > 1 else ""
        return f"{self.path}: {self.problems[0]}{more}"


class BatchNotFinished(RagAssetsError):
    """A provider batch has not ended by the poll deadline, or could not be polled. It stays
    recorded as pending in the store, and the next run with the same calls resumes polling it."""
