"""Domain exceptions.

Every message names what a user needs to find the problem (file, row, field), because these
messages travel unchanged into failed Dagster runs and check metadata.
"""


class RagAssetsError(Exception):
    """Base class of every error the domain core raises on purpose."""


class CorpusError(RagAssetsError):
    """The corpus root cannot be snapshotted at all (missing, empty, not a folder)."""


class ConfigError(RagAssetsError):
    """A setting or environment variable has a value the project cannot use."""
