"""The read-only guard's text checks and response limits (pure: no server)."""

from __future__ import annotations

import json

import pytest

from kb.config import coerce
from kb.errors import ConfigError
from kb.readonly import (
    HARD_MAX_TOKENS,
    HARD_TIMEOUT_S,
    Refused,
    check_query_type,
    check_text,
    clean,
    code_text,
    decode_escapes,
    dumps,
    limit_value,
    normalise,
    shape_rows,
)
from kb.tokens import count_tokens

B = "\\"

ALLOWED = [
    "MATCH (n:Note) RETURN n.path, n.date ORDER BY n.date DESC LIMIT 5",
    "RETURN 'a;b' AS s",
    'RETURN "semi;colon" AS s',
    "RETURN 1;",
    "RETURN 1 ;  // trailing",
    "MATCH (n) WHERE n.text CONTAINS 'LOAD CSV' RETURN n",
    "MATCH (n) WHERE n.text CONTAINS 'CALL { CREATE (x) } IN TRANSACTIONS' RETURN n",
    "RETURN 'http://example.com' AS url",
    "RETURN 1 // ; CREATE\n",
    "RETURN 1 /* ; LOAD CSV */",
    "RETURN 'it" + B + "'s; fine' AS s",
    "CALL db.labels() YIELD label RETURN label",
    "CALL db.labels",
    "CALL db.index.fulltext.queryNodes('chunk_text', 'pricing') YIELD node, score RETURN node.id, score",
    "CALL db.index.vector.queryNodes('chunk_embedding', 5, $vec) YIELD node RETURN node.id",
    "MATCH (db:Database) RETURN db.name",
    "RETURN apoc.coll.sum([1, 2]), apoc.text.join(['a'], ','), apoc.map.merge({}, {})",
    "RETURN apoc.convert.toJson([1]), apoc.date.format(0), apoc.meta.cypher.type(1)",
    "CALL apoc.meta.schema() YIELD value RETURN value",
    "CALL gds.pageRank.stream('g') YIELD nodeId RETURN nodeId",
    "RETURN vector.similarity.cosine([1.0], [1.0]), date.truncate('month', date()), "
    "point.distance(point({x: 0, y: 0}), point({x: 1, y: 1}))",
    "SHOW INDEXES",
    "SHOW ALL CONSTRAINTS",
    "SHOW PROCEDURES YIELD name RETURN name",
    "SHOW USER DEFINED FUNCTIONS",
    "WITH 1 AS show RETURN show",
    "RETURN 1 AS show",
    "MATCH (use:Person) RETURN use.name",
    "MATCH (n:Transaction) RETURN n",
    "MATCH (n) WHERE n.path IN ['a', 'b'] RETURN count(n)",
    "RETURN " + B + "u0027a;b" + B + "u0027 AS s",  # the escapes are quotes: ';' is inside a string
]

REFUSED = [
    ("RETURN 1; RETURN 2", "multiple statements"),
    ("MATCH (n) RETURN n; CREATE (x)", "multiple statements"),
    ("RETURN 1 " + B + "u003B CREATE (n)", "multiple statements"),
    ("RETURN '" + B + "u0027; CREATE (n) //'", "multiple statements"),  # the escape closes the string
    ("LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l", "LOAD CSV"),
    ("load  csv WITH HEADERS from 'http://x/y.csv' AS r RETURN r", "LOAD CSV"),
    ("/* hi */ LOAD /* there */ CSV FROM 'x' AS l RETURN l", "LOAD CSV"),
    ("LO" + B + "u0041D CSV FROM 'x' AS l RETURN l", "LOAD CSV"),
    ("ＬＯＡＤ ＣＳＶ FROM 'x' AS l RETURN l", "LOAD CSV"),  # fullwidth letters, NFKC
    ("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10 ROWS", "IN TRANSACTIONS"),
    ("UNWIND [1] AS i CALL (i) { CREATE (x) } IN 2 CONCURRENT TRANSACTIONS", "IN TRANSACTIONS"),
    ("TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "TERMINATE"),
    ("CALL dbms.components()", "dbms"),
    ("CALL dbms.security.createUser('x', 'y', false)", "dbms"),
    ("CALL `dbms`.`listConfig`()", "dbms"),
    ("CALL db.createLabel('X')", "db.createLabel"),
    ("CALL db . createLabel('X')", "db.createLabel"),
    ("MATCH (c) CALL db.create.setNodeVectorProperty(c, 'e', [1.0])", "db.create.setNodeVectorProperty"),
    ("CALL db.index.fulltext.createNodeIndex('x', ['A'], ['b'])", "createNodeIndex"),
    ("CALL db.clearQueryCaches()", "db.clearQueryCaches"),
    ("CALL db.stats.collect('QUERIES')", "db.stats.collect"),
    ("CALL apoc.create.node(['X'], {})", "apoc.create.node"),
    ("CALL apoc.merge.node(['X'], {})", "apoc.merge.node"),
    ("CALL apoc.load.json('file:///etc/passwd')", "apoc.load.json"),
    ("CALL apoc.cypher.run('CREATE (n)', {})", "apoc.cypher.run"),
    ("CALL apoc.cypher.doIt('MATCH (n) DETACH DELETE n', {})", "apoc.cypher.doIt"),
    ("CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DETACH DELETE n', {})", "apoc.periodic.iterate"),
    ("CALL apoc.export.csv.all('/tmp/x.csv', {})", "apoc.export"),
    ("CALL apoc.refactor.rename.label('A', 'B')", "apoc.refactor"),
    ("CALL apoc.schema.assert({}, {})", "apoc.schema.assert"),
    ("CALL apoc.util.sleep(100000)", "apoc.util.sleep"),
    ("CALL apoc.convert.setJsonProperty(n, 'a', 1)", "apoc.convert.setJsonProperty"),
    ("CALL apoc.trigger.add('x', 'CREATE (n)', {})", "apoc.trigger"),
    ("RETURN apoc.version()", "apoc.version"),
    ("CALL `apoc`.`cypher`.`run`('CREATE (n)', {})", "apoc.cypher.run"),
    ("CALL `apoc.cypher`.run('CREATE (n)', {})", "apoc.cypher.run"),
    ("CALL apoc" + B + "u002Ecreate.node(['X'], {})", "apoc.create.node"),
    ("CALL ap" + B + "u006Fc.create.node(['X'], {})", "apoc.create.node"),
    ("CALL apoc /* x */ . create . node(['X'], {})", "apoc.create.node"),
    ("CALL gds.pageRank.write('g', {writeProperty: 'x'})", "gds.pageRank.write"),
    ("CALL gds.graph.project('g', '*', '*')", "gds.graph.project"),
    ("RETURN genai.vector.encode('x', 'OpenAI', {})", "genai"),
    ("SHOW USERS", "SHOW USERS"),
    ("show privileges", "SHOW PRIVILEGES"),
    ("SHOW CURRENT USER", "SHOW CURRENT USER"),
    ("SHOW ROLES", "SHOW ROLES"),
    ("SHOW DATABASES", "SHOW DATABASES"),
    ("SHOW SETTINGS", "SHOW SETTINGS"),
    ("SHOW TRANSACTIONS", "SHOW TRANSACTIONS"),
    ("SHOW USER kb PRIVILEGES", "SHOW USER KB PRIVILEGES"),
    ("USE system SHOW USERS", "USE"),
    ("CYPHER 5 USE neo4j MATCH (n) RETURN n", "USE"),
    ("MATCH (n) CALL (n) { USE other MATCH (m) RETURN m } RETURN m", "USE"),
]


@pytest.mark.parametrize("query", ALLOWED)
def test_allowed_text(query: str) -> None:
    check_text(query)


@pytest.mark.parametrize(("query", "needle"), REFUSED)
def test_refused_text(query: str, needle: str) -> None:
    with pytest.raises(Refused) as info:
        check_text(query)
    assert str(info.value).startswith("refused: ")
    assert needle.lower() in str(info.value).lower()


def test_refusal_names_keep_their_case() -> None:
    with pytest.raises(Refused, match="db.createLabel is not allowed"):
        check_text("CALL db.createLabel('X')")


def test_comments_are_stripped_but_not_inside_strings() -> None:
    assert normalise("MATCH (n) // a comment\nRETURN n /* block\n ; */") == "match (n) return n"
    assert normalise("RETURN 'http://x' // c") == "return ''"
    assert normalise("RETURN 1 /* unterminated ; CREATE") == "return 1"


def test_strings_are_blanked_and_backticks_dropped() -> None:
    assert code_text("RETURN 'a;b', \"c'd\", `x y`") == "RETURN '', '', x_y"
    assert code_text("RETURN `a``b`") == "RETURN a_b"
    assert normalise("RETURN 'unterminated ; CREATE") == "return ''"


def test_unicode_escapes_decode_like_neo4j() -> None:
    assert decode_escapes("CR" + B + "u0045ATE") == "CREATE"
    assert decode_escapes(B * 2 + "u0041") == B * 2 + "u0041"  # escaped backslash: no escape
    assert decode_escapes(B * 3 + "u0041") == B * 2 + "A"
    assert decode_escapes(B + "u005Cu0041") == B + "u0041"  # one pass only
    assert decode_escapes(B + "uZZZZ") == B + "uZZZZ"


def test_query_type_verdict() -> None:
    check_query_type("r")
    for kind, needle in (
        ("w", "writes are not allowed (query type 'w')"),
        ("rw", "query type 'rw'"),
        ("s", "query type 's'"),
        (None, "did not classify"),
    ):
        with pytest.raises(Refused, match=needle.replace("(", r"\(").replace(")", r"\)")):
            check_query_type(kind)


def test_limits_only_go_down() -> None:
    assert limit_value(None, HARD_MAX_TOKENS) == HARD_MAX_TOKENS
    assert limit_value(100000, HARD_MAX_TOKENS) == HARD_MAX_TOKENS
    assert limit_value(2000, HARD_MAX_TOKENS) == 2000
    assert limit_value(300, HARD_TIMEOUT_S) == HARD_TIMEOUT_S
    assert limit_value(2.5, HARD_TIMEOUT_S) == 2.5
    for bad in (0, -1, "soon"):  # a bad value is refused when the config is read
        with pytest.raises(ConfigError, match="mcp_timeout_s = .* write it like mcp_timeout_s = "):
            coerce("mcp_timeout_s", bad, "in config.toml")


def test_clean_leaves_out_long_number_lists() -> None:
    row = clean({"embedding": [0.1] * 384, "short": [1.0, 2.0], "words": ["a"] * 100, "nan": float("nan")})
    assert row["embedding"] == "<list of 384 numbers left out>"
    assert row["short"] == [1.0, 2.0] and len(row["words"]) == 100
    json.loads(dumps(row))


def test_shape_rows_drops_whole_rows_and_stays_valid_json() -> None:
    rows = [{"x": i, "pad": "word " * 50} for i in range(500)]
    payload = shape_rows(["x", "pad"], rows, 0, True, 2000)
    text = dumps(payload)
    assert count_tokens(text) <= 2000
    back = json.loads(text)
    assert back["rows_returned"] + back["rows_cut"] == 500
    assert "more rows were cut" in back["notice"]
    assert back["rows"] == [{"x": i, "pad": "word " * 50} for i in range(back["rows_returned"])]
