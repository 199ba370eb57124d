"""Search over the kb graph: hybrid (keyword + dense, fused by rank)."""
