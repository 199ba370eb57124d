"""Near-duplicate entities judged in two cached passes through the stand-in API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from anthropic_standin import ChatStandIn
from knowledge_helpers import MODEL, system_text, user_text

from kb.extract.backends import AnthropicExtractor
from kb.extract.cache import ExtractionCache
from kb.extract.dedupe import CONFIRM, Judge, candidates, judged_merges, remembered_vector_candidates, vector_candidates


def ent(key: str, name: str, etype: str = "Organization", mentions: int = 1, private: bool = False) -> dict[str, Any]:
    return {"key": key, "name": name, "type": etype, "aliases": [], "mentions": mentions, "private_only": private}


ENTS = [
    ent("thing:mindreader ai", "MindReader AI", mentions=5),
    ent("thing:mindreader", "Mindreader", "Product"),
    ent("thing:quillmate", "Quillmate", mentions=9),
    ent("thing:quillmate notes", "Quillmate Notes", "Product"),
    ent("thing:the team", "The Team"),
    ent("thing:team", "Team"),
    ent("person:dana okafor", "Dana Okafor", "Person"),
    ent("person:dana whitfield", "Dana Whitfield", "Person"),
    ent("thing:harbor dental", "Harbor Dental"),
    ent("thing:harbour dental", "Harbour Dental", private=True),
]


def test_candidates_by_containment_and_similarity() -> None:
    pairs = {(c.a, c.b): c.why for c in candidates(ENTS)}
    assert pairs[("thing:mindreader", "thing:mindreader ai")] == "name containment"
    assert ("thing:quillmate", "thing:quillmate notes") in pairs
    assert pairs[("thing:harbor dental", "thing:harbour dental")].startswith("similar names")
    assert ("thing:team", "thing:the team") not in pairs  # generic words only
    assert not any(a.startswith("person:") and b.startswith("person:") for a, b in pairs)


def judge_responder(body: dict[str, Any]) -> dict[str, Any]:
    strict = system_text(body) == CONFIRM
    rejected = strict and "Quillmate Notes" in user_text(body)  # a company is not its product
    return {"same": not rejected, "reason": "company vs product" if rejected else "same name, other spelling"}


def test_two_passes_then_only_cached_decisions(tmp_path: Path) -> None:
    with ChatStandIn(judge_responder) as standin:
        ext = AnthropicExtractor(MODEL, "test-key", standin.base_url, backoff=0.01)
        merges, log = judged_merges(ENTS, Judge(MODEL, ExtractionCache(tmp_path), ext))
        sent = standin.sent_text()
        n = len(standin.requests)
    assert [(c, r) for c, r, _ in merges] == [("thing:mindreader", "thing:mindreader ai")]
    assert {(d["a"], d["same"]) for d in log} == {("thing:mindreader", True), ("thing:quillmate", False)}
    assert "Harbour Dental" not in sent  # known only from private notes: never sent to a remote judge
    assert n == 4  # accept + confirm for each of the two candidate pairs
    again, _ = judged_merges(ENTS, Judge(MODEL, ExtractionCache(tmp_path), None))
    assert again == merges


def unit(*xs: float) -> list[float]:
    return list(xs)


VECS = {
    "event:2025 churn wave": unit(1, 0.1, 0),
    "event:winter churn spike": unit(1, 0.12, 0),
    "event:board offsite": unit(0, 1, 0),
    "thing:churn wave": unit(1, 0.1, 0),
    "person:ana lee": unit(0, 0, 1),
    "person:anna li": unit(0, 0, 1),
}
NEAR = [
    ent("event:2025 churn wave", "2025 churn wave", "Event"),
    ent("event:winter churn spike", "Winter churn spike", "Event"),
    ent("event:board offsite", "Board offsite", "Event"),
    ent("thing:churn wave", "Churn wave", "Concept"),
    ent("person:ana lee", "Ana Lee", "Person"),
    ent("person:anna li", "Anna Li", "Person"),
]


def test_candidates_by_name_embeddings() -> None:
    pairs = {(c.a, c.b): c.why for c in vector_candidates(NEAR, VECS)}
    assert list(pairs) == [("event:2025 churn wave", "event:winter churn spike")]  # one namespace, no people
    assert pairs[("event:2025 churn wave", "event:winter churn spike")] == "similar name embeddings (1.00)"


def test_name_pairs_are_compared_once_per_name(tmp_path: Path) -> None:
    cache = ExtractionCache(tmp_path)
    first = remembered_vector_candidates(NEAR, lambda: VECS, "onnx:test", cache)
    assert [(c.a, c.b) for c in first] == [("event:2025 churn wave", "event:winter churn spike")]
    moved = {**VECS, "event:winter churn spike": unit(0, 0.5, 1), "event:churn wave 2": unit(0, 1, 0.05)}
    grown = NEAR + [ent("event:churn wave 2", "Churn wave 2", "Event")]
    again = {(c.a, c.b) for c in remembered_vector_candidates(grown, lambda: moved, "onnx:test", cache)}
    # the old pair is remembered, not compared again; only the new name was compared with every name
    assert again == {
        ("event:2025 churn wave", "event:winter churn spike"),
        ("event:board offsite", "event:churn wave 2"),
    }
    assert remembered_vector_candidates(NEAR[:1] + NEAR[2:], lambda: VECS, "onnx:test", cache) == []

    def no_vectors() -> dict[str, list[float]]:
        raise AssertionError("no name is new: no vector may be asked for")

    assert [(c.a, c.b) for c in remembered_vector_candidates(grown, no_vectors, "onnx:test", cache)] == sorted(again)
    assert [(c.a, c.b) for c in remembered_vector_candidates(NEAR, lambda: VECS, "other:embedder", cache)] == [
        ("event:2025 churn wave", "event:winter churn spike")
    ]


def test_an_embedding_pair_is_judged_like_any_other(tmp_path: Path) -> None:
    with ChatStandIn(judge_responder) as standin:
        ext = AnthropicExtractor(MODEL, "test-key", standin.base_url, backoff=0.01)
        merges, log = judged_merges(
            NEAR, Judge(MODEL, ExtractionCache(tmp_path), ext), vectors=lambda: VECS, identity="onnx:test"
        )
    assert [(c, r) for c, r, _ in merges] == [("event:winter churn spike", "event:2025 churn wave")]
    assert log[0]["candidate"] == "similar name embeddings (1.00)"
    assert merges[0][2].startswith("similar name embeddings (1.00); judged the same twice")


def test_a_word_most_names_share_is_not_evidence() -> None:
    many = [ent(f"thing:entity {i} labs", f"Entity {i} Labs") for i in range(300)]
    many += [ent("thing:mindreader ai", "MindReader AI"), ent("thing:mindreader", "Mindreader")]
    pairs = [(c.a, c.b) for c in candidates(many)]  # "entity" and "labs" blocks hold 300 names: skipped
    assert pairs == [("thing:mindreader", "thing:mindreader ai")]


def test_each_name_brings_at_most_its_nearest_names() -> None:
    alike = [ent(f"thing:entity {i}", f"Entity {i}") for i in range(12)]
    vecs = {e["key"]: unit(1, 0.001 * n, 0) for n, e in enumerate(alike)}  # all within cosine 0.9 of each other
    pairs = vector_candidates(alike, vecs)
    assert 12 <= len(pairs) <= 3 * len(alike) < 12 * 11 // 2  # not all 66 pairs
    assert vector_candidates(alike, vecs) == pairs  # the same vectors, the same pairs
