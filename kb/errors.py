"""kb's own exception types; the CLI turns these into one-line errors."""


class KbError(Exception):
    """An expected failure with a message that says what failed and the fix."""


class ConfigError(KbError):
    """A bad configuration value."""


class StoreError(KbError):
    """The graph store is unreachable, refused the login, or is unsuitable."""


class ServerError(KbError):
    """The managed Neo4j server could not be installed, started or stopped."""


class EmbedderError(KbError):
    """The embedding backend failed or does not match the index."""
