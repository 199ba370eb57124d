"""kb's own exception types; the CLI turns these into one-line errors."""

from urllib.parse import urlsplit, urlunsplit


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


def redact_uri(uri: str | None) -> str:
    """A connection URI fit to print: a password inside it (`neo4j://user:pw@host`) becomes ***."""
    if not uri:
        return str(uri)
    try:
        parts = urlsplit(uri)
        if parts.password is None:
            return uri
    except ValueError:
        return uri.split("@", 1)[-1] if "@" in uri else uri
    user = parts.username or ""
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
