"""The explorer's linked views: an address's ``#`` part (``explorer.hrefs.explorer_href``) is read by the page's own
filter code (``script.FILTERS``, run here under Node on the page's embedded data) and selects exactly the records it
names: a model's of a protocol by a judge, the two sides of a comparison, a model in a role, a pair of seats, a head
to head, a key (task code, setting), the Arena's N. Every value survives the trip: a model named with quotes,
markup, ``&``, ``#``, ``+``, ``%``, a colon or a control character comes back as the page has it, never as syntax.
(tests/report/test_links.py follows the report's own links, in Chromium too.)"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from functools import partial
from html import unescape

import pytest

from dialogbench.explorer import write_explorer
from dialogbench.explorer.hrefs import PAGE, explorer_href
from dialogbench.explorer.links import metric_href, slice_parts
from dialogbench.explorer.page import render
from dialogbench.explorer.script import FILTERS
from dialogbench.text.textsafe import visible
from dialogbench.run import registry

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="the page's filter code runs under Node (not installed)")
HOSTILE = ['bot"quoted\'', "<script>alert(1)</script>", "a&model=other", "x#frag", "plus+and space", "50%25 off",
           "spy:colon", "esc\x1b[2Jbell\x07", "bidi\u202eevil", "ünïcödé/slash", "</a><a href=x>", "&amp;"]

RUNNER = FILTERS + r"""
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const data = input.data;
for (const r of data.records) Filters.prepare(r, data);
const out = input.fragments.map((text) => {
  const f = Filters.parse(text);
  return {filters: f, format: Filters.format(f),
          ids: data.records.filter((r) => Filters.matches(r, f)).map((r) => r.id)};
});
process.stdout.write(JSON.stringify(out));
"""


def run_filters(data: dict, fragments: list[str]) -> list[dict]:
    """Each ``#`` part (without the #) as the page reads it: its filters (``Filters.parse``), the part the page writes
    back (``Filters.format``) and the ids of the records of ``data`` (the page's embedded data) it selects."""
    if NODE is None:
        pytest.skip("node is not installed")
    done = subprocess.run([NODE, "-e", RUNNER], input=json.dumps({"data": data, "fragments": fragments}),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def fragment(href: str) -> str:
    """The ``#`` part of a link as ``location.hash.slice(1)`` has it."""
    page, hash_, rest = href.partition("#")
    assert page == PAGE and hash_ == "#"
    return rest


def embedded(page: str) -> dict:
    return json.loads(re.search(r'id="explorer-data">(.*?)</script>', page, re.S).group(1))


@pytest.fixture(scope="module")
def site(lake, tmp_path_factory):
    """The explorer of the staged lake, and its data as the page holds it."""
    out = tmp_path_factory.mktemp("links")
    path = write_explorer(lake, out, families=registry.families())
    page = path.read_text()
    return {"path": path, "page": page, "data": embedded(page)}


def players(r: dict) -> dict[str, str]:
    """A game's role -> model, from its Players block (what the family wrote, read here without the page)."""
    return {k: v for b in r["blocks"] if b["kind"] == "fields" and b["title"] == "Players" for k, v in b["pairs"]}


def read_up_to(r: dict) -> set:
    return {b["upto"] for b in r["blocks"] if b["kind"] == "dialogue"}


def ids(records, keep) -> list[str]:
    return [r["id"] for r in records if keep(r)]


def test_the_page_carries_the_filter_code_and_the_link_fields(site):
    page = site["page"]
    assert FILTERS.strip() in page and 'id="f-model2"' in page and 'id="pinned"' in page
    assert page.count("<script") == 2  # the data and the one script: the filter code is inline in it


@needs_node
def test_each_link_selects_exactly_its_records(site):
    records = site["data"]["records"]
    by_protocol = {p: [r for r in records if r["protocol"] == p] for p in {r["protocol"] for r in records}}
    spyfall, tofu = by_protocol["gameeval_spyfall"], by_protocol["gameeval_tofukingdom"]
    arena = by_protocol["botchat_arena"]
    askguess, mt = by_protocol["gameeval_askguess"], by_protocol["mtbench101"]
    cases = {
        # a model's verdicts of one protocol by one judge
        explorer_href(protocol="botchat_unieval", models=["bot-a"], judge="judge"):
            ids(records, lambda r: r["protocol"] == "botchat_unieval" and r["models"] == ["bot-a"]
                and r["judge"] == "judge"),
        # the two sides of a comparison: either model's
        explorer_href(protocol="botchat_gteval", models=["bot-a", "bot-b"], judge="judge"):
            ids(records, lambda r: r["protocol"] == "botchat_gteval"),
        # unparseable only
        explorer_href(protocol="mtbench101", models=["bot-b"], judge="judge", unparsed=True):
            ids(mt, lambda r: r["models"] == ["bot-b"] and not r["parsed"]),
        # a task: the exact code among the keys
        explorer_href(protocol="mtbench101", models=["bot-a"], judge="judge", keys=["CM"]):
            ids(mt, lambda r: r["models"] == ["bot-a"] and r["title"].split(" · ")[2].startswith("CM ")),
        # a setting: without_description is not with_description
        explorer_href(protocol="gameeval_askguess", models=["bot-a"], keys=["with_description"]):
            ids(askguess, lambda r: r["models"] == ["bot-a"] and r["search"].split("/")[1] == "with_description"),
        # a model in a role, and a seat
        explorer_href(protocol="gameeval_spyfall", models=["bot-a"], role="spy"):
            ids(spyfall, lambda r: players(r)["spy"] == "bot-a"),
        explorer_href(protocol="gameeval_spyfall", seats={"spy": "bot-b", "villager": "bot-a"}):
            ids(spyfall, lambda r: players(r) == {"spy": "bot-b", "villager": "bot-a"}),
        explorer_href(protocol="gameeval_tofukingdom", models=["bot-a", "bot-b"], role="queen"):
            ids(tofu, lambda r: True),
        explorer_href(protocol="gameeval_tofukingdom", models=["bot-a"], role="queen", seats={"prince": "bot-b"}):
            ids(tofu, lambda r: players(r)["queen"] == "bot-a" and players(r)["prince"] == "bot-b"),
        # a head to head, at an N
        explorer_href(protocol="botchat_arena", models=["bot-a"], with_=["bot-b"], judge="judge", n=6):
            ids(arena, lambda r: read_up_to(r) == {6}),
        explorer_href(protocol="botchat_arena", models=["bot-a"], judge="judge", n=5): [],
        # a family, and every record
        explorer_href(family="gameeval", models=["bot-b"]):
            ids(records, lambda r: r["family"] == "gameeval" and "bot-b" in r["models"]),
        PAGE: [r["id"] for r in records],
    }
    found = run_filters(site["data"], [fragment(h) if "#" in h else "" for h in cases])
    for (href, expected), got in zip(cases.items(), found):
        assert got["ids"] == expected, href
    # none of them is vacuous but the one that names an N no verdict has
    assert sum(1 for e in cases.values() if not e) == 1
    tofu_queen = fragment(explorer_href(protocol="gameeval_tofukingdom", models=["bot-a"], role="queen"))
    only_a, = run_filters(site["data"], [tofu_queen])
    assert only_a["ids"] == ids(tofu, lambda r: players(r)["queen"] == "bot-a") and 0 < len(only_a["ids"]) < len(tofu)


@needs_node
def test_metric_slices_select_their_records(site):
    records = site["data"]["records"]
    spyfall = [r for r in records if r["protocol"] == "gameeval_spyfall"]
    href = partial(metric_href, families=registry.families())
    cases = {
        href("gameeval", "gameeval_spyfall", "spy_win_rate", "villager_model=bot-a", ["bot-a", "bot-b"]):
            ids(spyfall, lambda r: players(r)["villager"] == "bot-a"),
        href("gameeval", "gameeval_spyfall", "spy_win_rate", "", ["bot-b"]):
            ids(spyfall, lambda r: players(r)["spy"] == "bot-b"),
        href("mtbench101", "mtbench101_tasks", "score", "judge=judge, task=GR", ["bot-b"]):
            ids(records, lambda r: r["protocol"] == "mtbench101" and r["models"] == ["bot-b"]
                and r["search"].split()[0] == "GR"),
        href("botchat", "botchat_unieval", "pass_rate", "judge=judge, n=4", ["bot-a"]):  # every N: one verdict
            ids(records, lambda r: r["protocol"] == "botchat_unieval" and r["models"] == ["bot-a"]),
    }
    found = run_filters(site["data"], [fragment(h) for h in cases])
    for (link, expected), got in zip(cases.items(), found):
        assert got["ids"] == expected and expected, link


def test_metric_slices_map_to_filters():
    assert slice_parts("judge=j, n=16") == {"judge": "j", "n": "16"} and slice_parts(None) == {}
    href = partial(metric_href, families=registry.families())
    assert href("botchat", "botchat_elo", "elo", "judge=j, n=16", ["a"]) == \
        "explorer.html#protocol=botchat_arena&model=a&judge=j&n=16"
    assert href("botchat", "botchat_unieval", "pass_rate", "judge=j, n=16", ["a"]) == \
        "explorer.html#protocol=botchat_unieval&model=a&judge=j"
    assert href("gameeval", "gameeval_spyfall", "spy_living_rounds", "villager_model=b", ["a"]) == \
        "explorer.html#protocol=gameeval_spyfall&model=a&role=spy&seat=villager%3Ab"
    assert href("gameeval", "gameeval_tofukingdom", "win_rate", "camp=queen", ["a", "b"]) == \
        "explorer.html#protocol=gameeval_tofukingdom&model=a&model=b&role=queen"
    assert href("judge_checks", "judge_probes", "accuracy", "protocol=p", ["j"]) is None  # no records
    assert href("botchat", "botchat_unieval", "pass_rate", "judge=j, lang=de", ["a"]) is None  # unknown key


@needs_node
def test_hostile_names_come_back_as_the_page_has_them():
    hrefs = [explorer_href(protocol="gameeval_spyfall", models=[name, "plain"], judge=name, role="spy",
                           with_=[name], seats={"villager": name}, keys=[name]) for name in HOSTILE]
    for href in hrefs:  # nothing but the page's names, = and & between them and percent escapes in the address
        assert re.fullmatch(r"explorer\.html#([a-z]+=[A-Za-z0-9_.~%-]*&?)+", href), href
    found = run_filters({"records": [], "texts": {}, "protocols": {}}, [fragment(h) for h in hrefs])
    for name, got in zip(HOSTILE, found):
        shown = visible(name)  # the explorer's data has control characters made visible: so has the link
        f = got["filters"]
        assert f["model"] == [shown, "plain"] and f["judge"] == shown and f["role"] == "spy", name
        assert f["with"] == [shown] and f["seat"] == [f"villager:{shown}"] and f["key"] == [shown], name
        assert f["protocol"] == "gameeval_spyfall" and not f["unparsed"] and f["q"] == "" and f["n"] == ""
        assert "\x1b" not in json.dumps(f, ensure_ascii=False)


@needs_node
def test_a_hostile_model_name_selects_its_own_records_only():
    """Records written as a family would (a hostile name, one that is a prefix of it, one with its markup), through
    the page's own render: the link of each selects exactly its records."""
    from dialogbench.explorer.records import Record, fields

    names = ["<b>x</b>&y", "<b>x</b>", 'q"#&model=<b>x</b>', "esc\x1b[1m"]
    recs = [Record(id=f"gameeval_spyfall:{i}", family="gameeval", protocol="gameeval_spyfall", title=f"game {i}",
                   models=tuple(sorted({spy, villager})), judge=None, verdict="spy wins", parsed=True,
                   blocks=(fields("Players", {"spy": spy, "villager": villager}),), search=f"w{i}/0 key{i}")
            for i, (spy, villager) in enumerate([(a, b) for a in names for b in names if a != b])]
    data = {"records": [r.to_json() for r in recs], "texts": {}, "notes": [], "limit": 1000, "run": None,
            "board": None, "families": {"gameeval": "GameEval"},
            "protocols": {"gameeval_spyfall": {"family": "gameeval", "title": "SpyFall", "records": len(recs),
                                               "unparsed": 0, "shown": len(recs), "unparsed_shown": 0}}}
    page = render(data, title="t")
    held = embedded(page)  # the data as the page holds it (control characters made visible)
    assert all("\x1b" not in m for r in held["records"] for m in r["models"])
    wanted = {}
    for name in names:
        wanted[explorer_href(protocol="gameeval_spyfall", models=[name], role="spy")] = \
            [f"gameeval_spyfall:{i}" for i, r in enumerate(recs) if r.blocks[0]["pairs"][0][1] == name]
        wanted[explorer_href(protocol="gameeval_spyfall", models=[name])] = \
            [f"gameeval_spyfall:{i}" for i, r in enumerate(recs) if name in r.models]
    found = run_filters(held, [fragment(h) for h in wanted])
    for (href, expected), got in zip(wanted.items(), found):
        assert got["ids"] == expected and len(expected) in (3, 6), href


@needs_node
def test_the_page_writes_back_what_it_read():
    """The page rewrites the address from its filters (``Filters.format``): read again, the same filters."""
    hrefs = [explorer_href(protocol="botchat_arena", models=["a b", "c"], judge="j", with_=["d&e"], n=8),
             explorer_href(protocol="gameeval_spyfall", seats={"spy": "x", "villager": "y:z"}, keys=["k/1"]),
             "explorer.html#model=bot-a&unparsed=1&page=3&q=Hello%20World"]  # the page's older addresses still read
    first = run_filters({"records": [], "texts": {}, "protocols": {}}, [fragment(h) for h in hrefs])
    again = run_filters({"records": [], "texts": {}, "protocols": {}}, [f["format"] for f in first])
    assert [f["filters"] for f in first] == [f["filters"] for f in again]
    assert first[1]["filters"]["seat"] == ["spy:x", "villager:y:z"] and first[1]["filters"]["key"] == ["k/1"]
    assert first[2]["filters"]["page"] == 3 and first[2]["filters"]["q"] == "Hello World"
    assert first[2]["filters"]["unparsed"] is True and first[2]["filters"]["model"] == ["bot-a"]
