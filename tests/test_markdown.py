"""Links, tags and headings as Obsidian reads them; nothing inside code counts."""

from kb.markdown import RawLink, expand_tags, parse_structure


def links(body: str) -> list[RawLink]:
    return list(parse_structure(body).links)


def test_every_wikilink_form() -> None:
    got = links(
        "[[Note]] [[Note|text]] [[Note#Heading]] [[Note#Heading|t]] [[Note#^blk]] "
        "[[folder/Note]] ![[Note]] ![[pic.png]]"
    )
    assert [(lk.target, lk.display, lk.heading, lk.block, lk.embed) for lk in got] == [
        ("Note", None, None, None, False),
        ("Note", "text", None, None, False),
        ("Note", None, "Heading", None, False),
        ("Note", "t", "Heading", None, False),
        ("Note", None, None, "blk", False),
        ("folder/Note", None, None, None, False),
        ("Note", None, None, None, True),
        ("pic.png", None, None, None, True),
    ]
    assert {lk.kind for lk in got} == {"wiki"}


def test_markdown_links_to_notes_are_links_and_urls_are_not() -> None:
    got = links("See [the plan](Company/My%20Plan.md#Goals) and [site](https://x.com/a.md).")
    assert got == [RawLink("Company/My Plan.md", "the plan", "Goals", None, False, "md")]


def test_code_hides_links_tags_and_headings() -> None:
    body = "# Real\ntext #real-tag `#notatag [[nolink]]`\n```\n# not a heading #nottag [[nolink2]]\n```\n## Also real\n"
    s = parse_structure(body)
    assert [(h.level, h.text) for h in s.headings] == [(1, "Real"), (2, "Also real")]
    assert s.tags == ("real-tag",)
    assert s.links == ()


def test_tags_need_a_letter_and_a_space_before() -> None:
    s = parse_structure("#ok #123 #2024-plan x#no url http://a.b/#frag (#paren) #client/active #Über")
    assert s.tags == ("ok", "2024-plan", "client/active", "über")


def test_nested_tags_count_under_their_parents() -> None:
    assert expand_tags(["client/active", "#Metric/Customers", "x"]) == (
        "client",
        "client/active",
        "metric",
        "metric/customers",
        "x",
    )


def test_a_body_without_a_possible_link_skips_the_inline_pass_and_reads_the_same() -> None:
    """No "](" and no "]:": no Markdown link can occur, so the inline pass is skipped; headings read the same."""
    import kb.markdown as md

    bodies = [
        "# A *b* `c`\ntext [[Note|alias]] #tag\n```\n# not a heading\n```",
        "> ## quoted **bold** [[X]]\n- # in a list\n\nSetext *h*\n---",
        "# [ref] heading\n\n[ref]: other.md",  # a reference definition: the full pass
        "## see ![img](pic.png) and [n](n.md)",
    ]
    fast = [parse_structure(b) for b in bodies]
    assert [md.may_link(b) for b in bodies] == [False, False, True, True]
    full_pass = md.may_link
    try:
        md.may_link = lambda body: True  # type: ignore[assignment]
        assert [parse_structure(b) for b in bodies] == fast
    finally:
        md.may_link = full_pass
    assert [h.text for h in fast[0].headings] == ["A b c"] and fast[1].headings[0].text == "quoted bold [[X]]"
    assert [lk.target for lk in fast[3].links] == ["pic.png", "n.md"]


def test_embeds_and_tags_at_their_edges() -> None:
    """A "!" right before the link makes an embed, tags follow any whitespace (tab, ideographic space), and
    neither a link's text nor a tag glued to a word or inside code counts."""
    s = parse_structure("a#b #c [[l|x]]!![[z]] ![[e]]\n#t\u3000#u\t#v `#w` [[a]]x#q [[#not-a-tag]]")
    assert s.tags == ("c", "t", "u", "v")
    assert [(lk.target, lk.embed) for lk in s.links] == [
        ("l", False),
        ("z", True),
        ("e", True),
        ("a", False),
        ("", False),
    ]
