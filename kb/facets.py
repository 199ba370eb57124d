"""Facet words: opaque full-text tokens for a folder or a tag, written by refresh and matched by search."""

from __future__ import annotations

import hashlib


def _h(value: str) -> str:
    return hashlib.sha1(value.encode()).hexdigest()[:16]


def folder_facet(folder: str) -> str:
    return f"kbf_{_h(folder.strip('/'))}"


def tag_facet(tag: str) -> str:
    return f"kbt_{_h(tag.lower().lstrip('#'))}"
