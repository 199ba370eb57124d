"""Which package may import which, read from the source with ast; and the Cypher builders as strings."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from kb import cypher

REPO = Path(__file__).resolve().parents[1]
OURS = {"kb", "search", "eval", "extract"}
# The layers: kb depends on nothing else here; extract and search on kb; eval on search.
# Only the wiring modules (the CLI and the MCP server) may import upward.
ALLOWED = {"kb": {"kb"}, "extract": {"kb", "extract"}, "search": {"kb", "search"}, "eval": {"kb", "search", "eval"}}
WIRING = ("kb/cli/", "kb/mcp_server.py")


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found & OURS


def module_imports(path: Path) -> set[str]:
    """Full dotted names of every absolute import in a file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_readers_do_not_import_the_refresh_writer() -> None:
    """Search and eval read the graph; the facet words they match come from kb.facets, not from refresh."""
    bad = [
        path.relative_to(REPO).as_posix()
        for package in ("search", "eval")
        for path in sorted((REPO / package).rglob("*.py"))
        if "kb.refresh" in module_imports(path)
    ]
    assert bad == []


def test_layers_only_import_downward() -> None:
    bad = []
    for package, allowed in ALLOWED.items():
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel.startswith(WIRING):
                continue
            extra = imports(path) - allowed
            if extra:
                bad.append(f"{rel} imports {sorted(extra)}")
    assert bad == []


# Cypher clauses as kb writes them; prose such as "narrow the MATCH" does not match.
CYPHER = re.compile(
    r"\b(?:MATCH \(|MERGE \(|UNWIND \$|CALL db\.|CALL \(|DETACH DELETE\b|SHOW (?:INDEXES|"
    r"CONSTRAINTS|TRANSACTIONS)\b|TERMINATE TRANSACTIONS\b|(?:CREATE|DROP) (?:CONSTRAINT|INDEX|"
    r"VECTOR INDEX|FULLTEXT INDEX)\b)"
)
# Not yet moved into kb/cypher.py (issue 15, item 5), each for its reason.
CYPHER_PENDING = {
    "kb/readonly.py": "the MCP public view's statements; move with the view's tests",
}


def cypher_in(path: Path) -> list[int]:
    """Lines of string literals (f-string parts too) that hold a Cypher clause."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return sorted(
        {
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CYPHER.search(node.value)
        }
    )


def test_cypher_lives_in_one_module() -> None:
    offenders = []
    for package in ("kb", "search", "eval", "extract", "bench"):
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel == "kb/cypher.py" or rel in CYPHER_PENDING:
                continue
            lines = cypher_in(path)
            if lines:
                offenders.append(f"{rel}:{lines}")
    assert offenders == []


def test_the_cypher_check_finds_cypher(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text(
        'q = f"MATCH (x:{label}) RETURN x"\nr = "SHOW INDEXES YIELD name"\n'
        'msg = "narrow the MATCH, or aggregate"\ns = "CALL db.labels()"\n',
        encoding="utf-8",
    )
    assert cypher_in(sample) == [1, 2, 4]
    assert all((REPO / p).is_file() and cypher_in(REPO / p) for p in CYPHER_PENDING)


def test_schema_statements_are_idempotent() -> None:
    statements = cypher.schema_statements()
    assert all(" IF NOT EXISTS " in s for s in statements)
    assert "CREATE CONSTRAINT note_path IF NOT EXISTS FOR (n:Note) REQUIRE n.path IS UNIQUE" in statements
    assert cypher.vector_index(384) == (
        "CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (c:Chunk) ON (c.embedding) OPTIONS {indexConfig: "
        "{`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}"
    )


def test_filtered_vector_query_filters_before_ranking() -> None:
    q = cypher.vector_chunks_filtered()
    assert q.index("WHERE") < q.index("vector.similarity.cosine") < q.index("ORDER BY score DESC, id")
    assert "queryNodes" not in q


def test_facet_words_are_stable() -> None:
    """The words refresh wrote into existing graphs: moving the helpers must not change them."""
    from kb.facets import folder_facet, tag_facet
    from kb.refresh import folder_facet as written_folder
    from kb.refresh import tag_facet as written_tag

    assert (written_folder, written_tag) == (folder_facet, tag_facet)
    assert folder_facet("/Projects/") == folder_facet("Projects") == "kbf_53e890d5f0fffe09"
    assert tag_facet("#Work") == tag_facet("work") == "kbt_e274eeff768c6396"


def test_contributing_names_real_files_and_symbols() -> None:
    """CONTRIBUTING.md's recipes point at files that exist and at names those files define."""
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:kb|search|extract|eval|tests|bench|scripts)/[\w/.-]+\.(?:py|sh))`", text))
    assert paths and sorted(p for p in paths if "NAME" not in p and not (REPO / p).is_file()) == []
    pairs = re.findall(r"`(\w+)`(?: protocol)? (?:in|of) `([\w/.]+\.py)`", text)
    assert len(pairs) >= 8
    for name, path in pairs:
        source = (REPO / path).read_text(encoding="utf-8")
        assert re.search(rf"^\s*(?:def|class) {name}\b|^\s*{name}(?:: [^=]+)? =", source, re.M), f"{name} in {path}"
