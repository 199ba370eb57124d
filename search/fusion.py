"""How hybrid search fuses its two legs: candidate depth per leg, the RRF constant and the leg weights."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FusionConfig:
    """Every knob of the fusion in one place; a leg with weight 0 is not run at all."""

    keyword_depth: int = 100  # passages fetched from the full-text index (at least 5 per note asked for)
    vector_depth: int = 100  # passages fetched from the vector index
    rrf_k: int = 10  # reciprocal-rank constant: a smaller k rewards the very top ranks more (10 measured best)
    keyword_weight: float = 1.0
    vector_weight: float = 1.0
    passage_fusion: bool = False  # fuse passage rankings, then a chunk scores as its best passage (else: each
    # leg ranks chunks by their best passage, then the chunk rankings are fused)

    def depth(self, leg: str, k: int) -> int:
        """Candidates to fetch for `leg` when `k` notes are asked for."""
        return max(self.keyword_depth if leg == "keyword" else self.vector_depth, k * 5)


FUSION_PRESETS = {
    "default": FusionConfig(),
    "keyword": FusionConfig(vector_weight=0.0),
    "vector": FusionConfig(keyword_weight=0.0),
}
