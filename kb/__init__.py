"""kb: a local-first knowledge graph of an Obsidian-style Markdown vault."""

__version__ = "0.1.0"
