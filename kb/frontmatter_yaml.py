"""A YAML loader for front matter that cannot be made to blow up: no alias expansion, dates kept as text."""

from __future__ import annotations

from typing import Any

import yaml

_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_INT_CHARS = 40  # longer integer literals stay text (a 5,000-digit int cannot be printed as JSON)


class FrontMatterError(yaml.YAMLError):
    """Front matter kb refuses to read, with the reason."""


def _resolvers() -> dict[Any, list[tuple[str, Any]]]:
    """SafeLoader's implicit types minus timestamps: kb validates dates itself (2024-02-30 is text, not a crash)."""
    return {
        first: [(tag, rx) for tag, rx in items if tag != "tag:yaml.org,2002:timestamp"]
        for first, items in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


def _int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    text = loader.construct_scalar(node)
    if len(str(text)) > MAX_INT_CHARS:
        return str(text)
    return yaml.SafeLoader.construct_yaml_int(loader, node)


def _configure(cls: Any) -> Any:
    cls.yaml_implicit_resolvers = _resolvers()
    cls.yaml_constructors = dict(cls.yaml_constructors)
    cls.add_constructor("tag:yaml.org,2002:int", _int)
    return cls


@_configure
class _Fast(_Base):  # type: ignore[valid-type,misc]
    """The C parser, for front matter with no alias in it (nearly all)."""


@_configure
class _Guarded(yaml.SafeLoader):
    """The pure-Python parser, which can refuse aliases before anything is expanded."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped in types-PyYAML
            raise FrontMatterError(
                f"YAML alias *{event.anchor} (line {event.start_mark.line + 1}): kb does not "
                "expand anchors and aliases; write the value out"
            )
        return super().compose_node(parent, index)


def load_front_matter(text: str) -> Any:
    """Parse front matter text; raises yaml.YAMLError (FrontMatterError for refused constructs)."""
    loader = _Guarded if "*" in text else _Fast
    return yaml.load(text, Loader=loader)
