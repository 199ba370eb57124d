"""Which package may import which, read from the source with ast; and the Cypher builders as strings."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from kb import cypher

REPO = Path(__file__).resolve().parents[1]
# The design card's top-level folders and the installed names they carry (kb/search, kb/extract and kb/eval
# are links to them).
FOLDERS = {"kb": "kb", "search": "kb.search", "extract": "kb.extract", "eval": "kb.eval"}
LINKED = ("search", "extract", "eval")
# Bottom-up: each layer may import its own modules and the layers it names. The wiring (the CLI and the MCP
# server) is the top floor: it may import every layer, and no layer imports it.
LAYERS = {
    "core": set(),
    "extract": {"core"},
    "search": {"core"},
    "eval": {"core", "search", "extract"},
    "wiring": {"core", "extract", "search", "eval"},
}


def layer_of(module: str) -> str:
    """The layer a dotted kb module belongs to; every module belongs to exactly one."""
    parts = module.split(".")
    if parts[0] != "kb":
        raise ValueError(module)
    second = parts[1] if len(parts) > 1 else ""
    if second in LINKED:
        return second
    if second in ("cli", "mcp_server", "__main__"):
        return "wiring"
    return "core"


def sources() -> list[tuple[str, Path]]:
    """(dotted module, file) for every module kb installs, read from the real folders."""
    found = []
    for folder, package in FOLDERS.items():
        root = REPO / folder
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).with_suffix("").parts
            if rel[0] in LINKED and folder == "kb":
                continue  # the links: read once, from the real folder
            parts = [p for p in rel if p != "__init__"]
            found.append((".".join([package, *parts]), path))
    return found


def absolute_imports(module: str, path: Path) -> set[str]:
    """Every module a file imports, relative imports resolved against its own package."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                if node.module:
                    found.add(f"{base}.{node.module}")
                else:
                    found.update(f"{base}.{alias.name}" for alias in node.names)
            elif node.module:
                found.add(node.module)
    return found


def module_imports(path: Path) -> set[str]:
    """Full dotted names of every absolute import in a file."""
    return absolute_imports("x.y", path)


def test_every_module_has_one_layer_and_imports_only_downward() -> None:
    modules = sources()
    assert len(modules) > 70 and {layer_of(m) for m, _ in modules} == set(LAYERS)
    bad = []
    for module, path in modules:
        own = layer_of(module)
        for target in sorted(absolute_imports(module, path)):
            if target.split(".")[0] != "kb":
                continue
            other = layer_of(target)
            if other != own and other not in LAYERS[own]:
                bad.append(f"{path.relative_to(REPO)} ({own}) imports {target} ({other})")
    assert bad == []


def test_the_layer_check_catches_an_upward_import(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text("from kb.cli.common import store\nfrom . import fusion\n", encoding="utf-8")
    targets = absolute_imports("kb.search.hybrid", sample)
    assert targets == {"kb.cli.common", "kb.search.fusion"}
    assert [layer_of(t) for t in sorted(targets)] == ["wiring", "search"]


def test_code_uses_the_installed_names_only() -> None:
    """No file imports a bare search/extract/eval package: installed, only kb exists."""
    bad = []
    for folder in ("kb", "search", "extract", "eval", "tests", "bench", "scripts"):
        for path in sorted((REPO / folder).rglob("*.py")):
            tops = {m.split(".")[0] for m in module_imports(path)}
            if tops & set(LINKED):
                bad.append(f"{path.relative_to(REPO)}: {sorted(tops & set(LINKED))}")
    assert bad == []


def test_the_links_point_at_the_design_card_folders() -> None:
    for name in LINKED:
        link = REPO / "kb" / name
        assert link.is_symlink() and link.resolve() == (REPO / name).resolve(), name
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    listed = re.search(r"^packages = \[(.*)\]", text, re.M)
    assert listed and all(p.strip(' "').startswith("kb") for p in listed.group(1).split(","))


def test_readers_do_not_import_the_refresh_writer() -> None:
    """Search and eval read the graph; the facet words they match come from kb.facets, not from refresh."""
    bad = [
        path.relative_to(REPO).as_posix()
        for module, path in sources()
        if layer_of(module) in ("search", "eval") and "kb.refresh" in module_imports(path)
    ]
    assert bad == []


# Cypher clauses as kb writes them; prose such as "narrow the MATCH" does not match.
CYPHER = re.compile(
    r"\b(?:MATCH \(|MERGE \(|UNWIND \$|CALL db\.|CALL \(|DETACH DELETE\b|SHOW (?:INDEXES|"
    r"CONSTRAINTS|TRANSACTIONS)\b|TERMINATE TRANSACTIONS\b|(?:CREATE|DROP) (?:CONSTRAINT|INDEX|"
    r"VECTOR INDEX|FULLTEXT INDEX)\b)"
)


def docstrings(tree: ast.AST) -> set[int]:
    """ids of the module, class and function docstring nodes (prose, not statements)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def cypher_in(path: Path) -> list[int]:
    """Lines of string literals (f-string parts too) that hold a Cypher clause; docstrings and the read-only
    guard's refusals ("LOAD CSV is not allowed") name clauses without being Cypher."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = docstrings(tree)
    return sorted(
        {
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in prose
            and "not allowed" not in node.value
            and CYPHER.search(node.value)
        }
    )


def test_cypher_lives_in_one_module() -> None:
    offenders = []
    for package in ("kb", "search", "eval", "extract", "bench"):
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel == "kb/cypher.py":
                continue
            lines = cypher_in(path)
            if lines:
                offenders.append(f"{rel}:{lines}")
    assert offenders == []


def test_the_cypher_check_finds_cypher(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text(
        'q = f"MATCH (x:{label}) RETURN x"\nr = "SHOW INDEXES YIELD name"\n'
        'msg = "narrow the MATCH, or aggregate"\ns = "CALL db.labels()"\n'
        'def f():\n    """Runs CALL db.labels() for the names."""\n'
        '    return "TERMINATE TRANSACTIONS is not allowed"\n',
        encoding="utf-8",
    )
    assert cypher_in(sample) == [1, 2, 4]


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
