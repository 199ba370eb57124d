"""How hybrid search fuses its legs (full-text and vector over passages, full-text over whole chunks): candidate
depth per leg, the RRF constant and the leg weights.

Measured again and not used (the project's 23 sets over the shared vault, 637 scored questions, same graph; the
defaults give recall@10 0.836, recall@20 0.914, MRR 0.697, key facts within 8k 0.844, 15 of 92 set x metric cells
below the naive baseline): rrf_k 30 / 60: MRR 0.692 / 0.694, cells 15 / 16; depth 50 / 200 per leg: MRR 0.697 /
0.698, cells 15 / 17; note_weight 1.0: MRR 0.698, cells 15; vector_weight 1.2 / 1.3 / 1.5: MRR 0.693 / 0.690 /
0.685, cells 13 each; text_weight 0.5 / 0.7: MRR 0.676 / 0.684, cells 13 each. A heavier vector leg brings back
second gold notes that only it finds (recall@20 against naive) and costs the first rank more often than it gains."""

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
    # the third leg: whole chunks by their own full-text index (text, breadcrumb, title). A passage ranks by the
    # question words it holds in 150 tokens; a chunk by all it holds, so a question whose words spread over a
    # section finds it (measured in the README's Search section); not with passage_fusion
    text_depth: int = 100
    text_weight: float = 1.0
    # notes: each leg also ranks notes (by their best chunk in it), fused by reciprocal rank with `note_rrf_k`,
    # and a note scores its best chunk's fused score plus `note_weight` times that: a note whose keyword-best and
    # vector-best chunks differ gains from both legs, as a note-level baseline does. Measured on the project's 21
    # sets over the shared vault (579 scored questions, same run), hybrid with 0 / 0.5: recall@10 0.823 / 0.831,
    # recall@20 0.905 / 0.909, MRR 0.687 / 0.691; weights 0.25 and 1.0 and k 30 and 60 were between the two
    note_weight: float = 0.5
    note_rrf_k: int = 10
    # a note's second and third chunks are shown (and read by graph search) only when their fused score is at
    # least this share of its best chunk's: a chunk the question barely touched spends the context's tokens on
    # the rest of a long note. Measured on the project's 24 sets over the shared vault (682 questions, same
    # build, against 0): 0.4: key facts within 8k, hybrid 0.841 -> 0.844 (6 questions won, none lost), graph
    # 0.854 -> 0.859 (7, none), gold notes within 8k hybrid 0.892 -> 0.894 (5, none), graph 0.925 -> 0.927 (7,
    # 2), graph MRR 1 won, none lost; 0.3: hybrid facts 4 won; 0.5: 8 won, 3 lost, graph MRR 2 won, 4 lost;
    # 0.6: 11 won, 6 lost; 0.7: 13 won, 20 lost. Rankings of hybrid search are the same at every value
    chunk_floor: float = 0.4
    # ... and the first note, the one most likely to hold the answer, shows up to this many (the others 3): a long
    # note's answer is often in a section beyond its best three. Measured the same way, with chunk_floor 0.4: 5
    # chunks for the first note: key facts within 8k, hybrid 0.844 -> 0.851 (7 questions won, none lost), gold
    # notes unchanged; graph 0.859 -> 0.864 (7 won, 2 lost), MRR 0.741 -> 0.743 (4 / 2), current-first 0.731 ->
    # 0.733 (1 / 0). 8 or 12: hybrid facts 10 won, 2 / 3 lost; 5 for the first 2 / 3 / 5 notes: 14 / 16 / 19 won
    # and 3 / 5 / 6 lost, gold notes within 8k 5 / 6 / 8 lost (fewer notes fit)
    first_chunks: int = 5
    passage_fusion: bool = False  # fuse passage rankings, then a chunk scores as its best passage (else: each
    # leg ranks chunks by their best passage, then the chunk rankings are fused)

    def depth(self, leg: str, k: int) -> int:
        """Candidates to fetch for `leg` when `k` notes are asked for."""
        depth = {"keyword": self.keyword_depth, "vector": self.vector_depth, "text": self.text_depth}[leg]
        return max(depth, k * 5)


FUSION_PRESETS = {
    "default": FusionConfig(),
    "keyword": FusionConfig(vector_weight=0.0, text_weight=0.0),
    "vector": FusionConfig(keyword_weight=0.0, text_weight=0.0),
    "text": FusionConfig(keyword_weight=0.0, vector_weight=0.0),
    "passages": FusionConfig(text_weight=0.0),
    "chunks": FusionConfig(note_weight=0.0),  # notes by their best chunk alone, as before the note-level fusion
}
