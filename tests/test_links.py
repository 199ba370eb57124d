"""Link resolution as Obsidian does it."""

from kb.links import LinkIndex, alias_table
from kb.markdown import RawLink

NOTES = [
    "Company/Meetings/Kickoff.md",
    "Clients/Acme/Kickoff.md",
    "Kickoff.md",
    "People/Ann Lee.md",
    "Company/Plan.md",
    "Company/Sub/Plan.md",
]
INDEX = LinkIndex(NOTES, ["attachments/diagram.png", "docs/report.pdf"])


def wiki(target: str, embed: bool = False) -> RawLink:
    return RawLink(target, None, None, None, embed, "wiki")


def test_name_resolves_to_the_shortest_path() -> None:
    assert INDEX.resolve(wiki("Kickoff"), "x.md").target == "Kickoff.md"
    assert INDEX.resolve(wiki("plan"), "x.md").target == "Company/Plan.md"


def test_vault_path_and_partial_path_win_over_name() -> None:
    assert INDEX.resolve(wiki("Clients/Acme/Kickoff"), "x.md").target == "Clients/Acme/Kickoff.md"
    assert INDEX.resolve(wiki("Acme/Kickoff"), "x.md").target == "Clients/Acme/Kickoff.md"
    assert INDEX.resolve(wiki("company/sub/PLAN.md"), "x.md").target == "Company/Sub/Plan.md"


def test_case_insensitive() -> None:
    assert INDEX.resolve(wiki("ann lee"), "x.md").target == "People/Ann Lee.md"


def test_markdown_links_are_relative_to_the_note() -> None:
    link = RawLink("Plan.md", "p", None, None, False, "md")
    assert INDEX.resolve(link, "Company/Sub/Other.md").target == "Company/Sub/Plan.md"


def test_attachments_and_missing() -> None:
    assert INDEX.resolve(wiki("diagram.png", True), "x.md").kind == "attachment"
    assert INDEX.resolve(wiki("report.pdf", True), "x.md").target == "docs/report.pdf"
    gone = INDEX.resolve(wiki("ghost.png", True), "x.md")
    assert (gone.kind, gone.target, gone.missing_kind) == ("missing", "ghost.png", "attachment")
    note = INDEX.resolve(wiki("Nowhere Note"), "x.md")
    assert (note.kind, note.target, note.missing_kind) == ("missing", "nowhere note", "note")


def test_same_note_heading_link() -> None:
    assert INDEX.resolve(RawLink("", None, "Intro", None, False, "wiki"), "Kickoff.md").target == "Kickoff.md"


def test_alias_table_is_sorted_and_lowercase() -> None:
    assert alias_table([("b.md", ["QM"]), ("a.md", ["qm", "Other"])]) == {"qm": ["a.md", "b.md"], "other": ["a.md"]}


def test_unicode_forms_resolve_to_each_other() -> None:
    """A link typed in NFC (as keyboards do) finds a file whose name the file system stored in NFD (macOS)."""
    index = LinkIndex(["People/Rene\u0301 Cafe\u0301.md"], ["img/Se\u0301ance.png"])
    assert index.resolve(wiki("Ren\u00e9 Caf\u00e9"), "x.md").target == "People/Rene\u0301 Cafe\u0301.md"
    assert index.resolve(wiki("S\u00e9ance.png", embed=True), "x.md").target == "img/Se\u0301ance.png"


def test_table_escaped_pipes() -> None:
    """Inside a Markdown table Obsidian escapes the pipe: [[Note\\|alias]] and ![[image.png\\|100]]."""
    from kb.markdown import parse_structure

    links = parse_structure("| a | b |\n|---|---|\n| [[Kickoff\\|the kickoff]] | ![[diagram.png\\|100]] |").links
    assert [(lk.target, lk.display, lk.embed) for lk in links] == [
        ("Kickoff", "the kickoff", False),
        ("diagram.png", "100", True),
    ]
    assert [INDEX.resolve(lk, "x.md").kind for lk in links] == ["note", "attachment"]
