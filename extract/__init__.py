"""Knowledge layer (LLM extraction). Not built yet: see the open issues."""
