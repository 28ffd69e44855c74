"""From a number to its items: every number of the report that links (a leaderboard's cells, each family's tables,
each cell of "Who is really ahead" and the number under each of its rows) points to the explorer beside it, and the
explorer's own filter code (run under Node on the page's embedded data) selects exactly the items behind that number:
the model's verdicts of the protocol by the report's judge (the Arena's at the number's N, a head to head's both
models), the MT-Bench-101 turns of the model (of the task), the GameEval games of the model in the setting, of the
seats, of the word pair; for a comparison, both models' items of the metric's slice. Each expectation below is read
from the records themselves (their players, titles and dialogues), not from the filter. A hostile model name is
escaped in the address; Markdown keeps its text alone. In Chromium (slow), a link clicked in the report, opened from
the file and over ``dialogbench serve``, shows those records."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from dialogbench.run import registry
from dialogbench.backends import clear_backends
from dialogbench.explorer import write_explorer
from dialogbench.history.tables import METRIC_PAIRS_TABLE
from dialogbench.run.registry import load_config, open_lake
from dialogbench.report import html as report_html
from dialogbench.report.ahead import Matrix
from dialogbench.report.build import write_report
from dialogbench.report.tables import Linked, Table, link
from dialogbench.text.textsafe import visible
from tests import stage_runner
from tests.conftest import REPO_ROOT
from tests.explorer.lakes import staged_config
from tests.explorer.test_links import HOSTILE, embedded, fragment, players, run_filters
from tests.report.test_ahead import pair
from tests.report.test_report_browser import browser, page_errors  # noqa: F401  (browser: a fixture)

BOARD = "config"  # the staged config's board
JUDGE = "judge"
MODELS = ("bot-a", "bot-b")
FLAG = " ⚠"
REPO = Path(__file__).resolve().parents[2]


def linked_lake(root: Path):
    """The explorer tests' staged lake (every family's real stages), the Arena judged at two N, and a run's paired
    comparisons of its two models on every compared metric (metric_pairs: a matrix per slice, MT-Bench-101's four task
    slices folded into one tally)."""
    staged_config(root)
    path = root / "config.yaml"
    data = yaml.safe_load(path.read_text())
    data["botchat"]["arena"]["n"] = [4, 6]
    path.write_text(yaml.safe_dump(data))
    config = load_config(path, root=REPO_ROOT)
    clear_backends()
    try:
        for stage in registry.stages(config):
            assert stage_runner.run(config, stage.name, "run-links").failed == 0, stage.name
    finally:
        clear_backends()
    lake = open_lake(config.lake)
    a, b = MODELS
    compared = [(("botchat", "botchat_unieval", "pass_rate"), f"judge={JUDGE}, n=6"),
                (("botchat", "botchat_gteval", "win_tie_rate"), f"judge={JUDGE}"),
                (("botchat", "botchat_elo", "elo"), f"judge={JUDGE}, n=4"),
                (("mtbench101", "mtbench101_leaderboard", "avg"), f"judge={JUDGE}"),
                *((("mtbench101", "mtbench101_tasks", "score"), f"judge={JUDGE}, task={t}")
                  for t in ("CM", "GR", "AR", "SI")),
                *((("gameeval", "gameeval_askguess", "st"), f"setting={s}")
                  for s in ("with_description", "without_description")),
                *((("gameeval", "gameeval_spyfall", "spy_win_rate"), f"villager_model={m}") for m in MODELS),
                *((("gameeval", "gameeval_tofukingdom", "win_rate"), f"camp={c}") for c in ("prince", "queen", "spy"))]
    rows = [{**pair(metric, slice_, a, b, 0.7, 0.4, f"{a} ahead", ci=(0.1, 0.5), run="r3"), "board": BOARD}
            for metric, slice_ in compared]
    METRIC_PAIRS_TABLE.write(lake, rows)
    return lake


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    lake = linked_lake(tmp_path_factory.mktemp("links") / "staged")
    out = lake.root / "reports"
    paths = write_report(lake, out, families=registry.families())
    page = write_explorer(lake, out, families=registry.families()).read_text()
    return {"lake": lake, "out": out, "html": paths["html"].read_text(), "md": paths["md"].read_text(),
            "data": embedded(page)}


class Tables(HTMLParser):
    """Every table of the page: its section, caption (a folded table's: its summary), headers (the last header row)
    and body rows, each cell as (text, lines joined by newlines; the address of its explorer link or None). The
    numbers under an "ahead" matrix's row names are cells too (their row's first cell's link)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables, self.section, self.summary = [], None, ""
        self.table = self.row = self.cell = None
        self.in_caption = self.in_summary = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.section = a.get("id")
        elif tag == "summary":
            self.in_summary, self.summary = True, ""
        elif tag == "table":
            self.table = {"section": self.section, "class": a.get("class") or "", "caption": "", "heads": [],
                          "rows": [], "summary": self.summary}
        elif tag == "caption" and self.table is not None:
            self.in_caption = True
        elif tag == "tr" and self.table is not None:
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = {"text": "", "href": None, "hrefs": [], "tag": tag}
        elif tag == "br" and self.cell is not None:
            self.cell["text"] += "\n"
        elif tag == "a" and self.cell is not None and a.get("class") == "ex":
            self.cell["hrefs"].append(a["href"])
            if not self.cell["text"]:
                self.cell["href"] = a["href"]

    def handle_endtag(self, tag):
        if tag == "summary":
            self.in_summary = False
        elif tag == "caption":
            self.in_caption = False
        elif tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.row and all(c["tag"] == "th" for c in self.row):
                self.table["heads"] = [c["text"].split("\n")[0] for c in self.row]
            elif self.row:
                self.table["rows"].append(self.row)
            self.row = None
        elif tag == "table" and self.table is not None:
            self.table["caption"] = self.table["caption"] or self.table.pop("summary")
            self.tables.append(self.table)
            self.table = None
        elif tag == "details":
            self.summary = ""

    def handle_data(self, data):
        if self.in_caption and self.table is not None:
            self.table["caption"] += data
        elif self.in_summary:
            self.summary += data
        if self.cell is not None:
            self.cell["text"] += data


def tables_of(page: str) -> list[dict]:
    parser = Tables()
    parser.feed(page)
    return parser.tables


# The items behind each number, read from the records: what the families wrote in them (their players, titles,
# dialogues), independent of the page's filter code.

def upto(r: dict) -> set:
    return {b["upto"] for b in r["blocks"] if b["kind"] == "dialogue"}


def part(r: dict, i: int) -> str:
    """The i-th " · " part of a record's title (MT-Bench-101: 2 is "CM (Context Memory)"; a game: 1 its item)."""
    return r["title"].split(" · ")[i]


class Behind:
    def __init__(self, records: list[dict]) -> None:
        self.records = records

    def __call__(self, protocol: str, keep) -> list[str]:
        return [r["id"] for r in self.records if r["protocol"] == protocol and keep(r)]

    def verdicts(self, protocol: str, models, *, n=None, both=False, unparsed=False) -> list[str]:
        models = set(models)
        return self(protocol, lambda r: r["judge"] == JUDGE and (models <= set(r["models"]) if both
                                                                 else bool(models & set(r["models"])))
                    and (n is None or upto(r) == {n}) and (not unparsed or not r["parsed"]))

    def turns(self, models, task=None, unparsed=False) -> list[str]:
        return self("mtbench101", lambda r: r["judge"] == JUDGE and r["models"][0] in models
                    and (task is None or part(r, 2).split()[0] == task) and (not unparsed or not r["parsed"]))

    def askguess(self, models, setting) -> list[str]:
        return self("gameeval_askguess", lambda r: r["models"][0] in models and part(r, 2) == setting)

    def seated(self, game: str, seats: dict, item=None) -> list[str]:
        return self(f"gameeval_{game}", lambda r: seats.items() <= players(r).items()
                    and (item is None or part(r, 1) == item))

    def playing(self, game: str, role: str | None, models, **seats) -> list[str]:
        return self(f"gameeval_{game}", lambda r: (players(r)[role] in models if role else
                                                   bool(set(models) & set(r["models"])))
                    and seats.items() <= players(r).items())


def model_of(text: str) -> str:
    return text.split("\n")[0].removesuffix(FLAG)


SETTINGS = {"w/ prior description": "with_description", "w/o prior description": "without_description"}


def expected(t: dict, row: list[dict], col: int, behind: Behind) -> list[str] | None:
    """The ids behind the cell ``row[col]`` of table ``t``; None where no link is expected."""
    section, head, cap = t["section"], t["heads"][col] if col < len(t["heads"]) else "", t["caption"]
    first = model_of(row[0]["text"])
    if section == "leaderboard":
        m = model_of(row[1]["text"])
        if head.startswith("Win + Tie"):
            return behind.verdicts("botchat_gteval", [m])
        if head.startswith("pass@") or head == "judged":
            return behind.verdicts("botchat_unieval", [m])
        if head.startswith("Elo@"):
            return behind.verdicts("botchat_arena", [m], n=int(head[4:]))
    if section == "unieval":
        if head.startswith("N="):
            return behind.verdicts("botchat_unieval", [first])
        if head == "unparsed":
            return behind.verdicts("botchat_unieval", [first], unparsed=True)
    if section == "arena":
        if cap.startswith("All pairs at N="):
            n = int(re.match(r"All pairs at N=(\d+)", cap).group(1))
            pair_ = [first, model_of(row[1]["text"])]
            return behind.verdicts("botchat_arena", pair_, n=n, both=True, unparsed=head == "unparsed")
        if found := re.match(r"(Elo|BT|games)@(\d+)", head):
            return behind.verdicts("botchat_arena", [first], n=int(found.group(2)))
    if section == "gt":
        if head.startswith("UniEval"):
            return behind.verdicts("botchat_unieval", [first], unparsed=head == "UniEval unparsed")
        if col > 0:
            return behind.verdicts("botchat_gteval", [first], unparsed=head == "unparsed")
    if section == "mtbench101" and cap.startswith("Tasks:"):
        m = model_of(row[1]["text"])
        if head in ("Avg", "Avg (OpenCompass rule)"):
            return behind.turns([m])
        if head == "unparsed":
            return behind.turns([m], unparsed=True)
        if re.fullmatch(r"[A-Z]{2}", head):
            return behind.turns([m], task=head)
    if section == "gameeval":
        if cap.startswith("Table 2, Ask-Guess"):  # the position (#) first, then the model
            setting = next(v for k, v in SETTINGS.items() if f"Ask-Guess {k}," in cap)
            return behind.askguess([model_of(row[1]["text"])], setting)
        if cap.startswith("Table 3, SpyFall"):
            return behind.seated("spyfall", {"spy": first, "villager": head})
        if cap.startswith("Figure 6"):
            item = head.replace(" / ", ",")
            return behind.seated("spyfall", {"spy": first, "villager": model_of(row[1]["text"])}, item)
        if cap.startswith("All SpyFall model pairs"):
            return behind.seated("spyfall", {"spy": first, "villager": model_of(row[1]["text"])})
        if cap.startswith("Table 4, TofuKingdom: points"):
            return behind.seated("tofukingdom", {c: model_of(row[i]["text"]) for i, c in
                                                 enumerate(("prince", "spy", "queen"))})
        if cap.startswith("Table 4, TofuKingdom Total Points"):  # the points, then a win rate per camp
            camp = head.split()[0].lower() if head.endswith(" win rate") else None
            return behind.playing("tofukingdom", camp, [first])
    return None


CAPTION = re.compile(r"^[^:]+: (\w+)\.(\w+)(?: \(([^)]*)\))?")


def expected_ahead(t: dict, models: list[str], behind: Behind) -> list[str]:
    """The ids behind an "ahead" cell (both models) or a row's number (one): the metric's items in its slice."""
    leaderboard, metric, slice_ = CAPTION.match(t["caption"]).groups()
    parts = dict(p.split("=", 1) for p in (slice_ or "").split(", ") if "=" in p)
    if leaderboard == "botchat_unieval":
        return behind.verdicts("botchat_unieval", models)
    if leaderboard == "botchat_gteval":
        return behind.verdicts("botchat_gteval", models)
    if leaderboard == "botchat_elo":
        return behind.verdicts("botchat_arena", models, n=int(parts["n"]))
    if leaderboard == "mtbench101_leaderboard":
        return behind.turns(models)
    if leaderboard == "mtbench101_tasks":  # a tally: every task
        return behind.turns(models, task=parts.get("task"))
    if leaderboard == "gameeval_askguess":
        return behind.askguess(models, parts["setting"])
    if leaderboard == "gameeval_spyfall":
        return behind.playing("spyfall", "spy", models, villager=parts["villager_model"])
    if leaderboard == "gameeval_tofukingdom":
        return behind.playing("tofukingdom", parts["camp"], models)
    raise AssertionError(f"no expectation for {t['caption']}")


def checked_links(site) -> list[dict]:
    """Every explorer link of the report: its table's section and caption, its column's header, its row's first
    cell, its address (as written in the page) and the ids expected behind it; fails on a link no expectation
    covers."""
    behind = Behind(site["data"]["records"])
    out = []
    for t in tables_of(site["html"]):
        found = lambda head, first, href, want: out.append(  # noqa: E731
            {"section": t["section"], "caption": t["caption"], "head": head, "first": first, "href": href,
             "want": want})
        for row in t["rows"]:
            if "ahead" in t["class"]:
                models = [r[0]["text"].split("\n")[0] for r in t["rows"]]  # the row names: the columns' order
                a = row[0]["text"].split("\n")[0]
                for href in row[0]["hrefs"]:  # the number under the row's name
                    found("", a, href, expected_ahead(t, [a], behind))
                for b, c in zip(models, row[1:]):
                    if c["hrefs"]:
                        assert a != b, "the diagonal links nowhere"
                        found(b, a, c["href"], expected_ahead(t, [a, b], behind))
                continue
            for col, c in enumerate(row):
                if not c["hrefs"]:
                    continue
                assert c["hrefs"] == [c["href"]], "one link per cell, around all of it"
                want = expected(t, row, col, behind)
                head = t["heads"][col] if col < len(t["heads"]) else str(col)
                assert want is not None, f"a link no expectation covers: {t['section']} {t['caption']} {head} {c}"
                found(head, row[0]["text"].split("\n")[0], c["href"], want)
    return out


def test_every_linked_number_selects_exactly_its_items(site):
    links = checked_links(site)
    found = run_filters(site["data"], [fragment(unescape(link_["href"])) for link_ in links])
    for link_, got in zip(links, found):
        assert got["ids"] == link_["want"], link_
    # every section's numbers link, and only a count of unparseable verdicts may have nothing behind it
    assert {link_["section"] for link_ in links} == {"leaderboard", "unieval", "arena", "gt", "mtbench101", "gameeval",
                                                     "ahead"}
    assert len(links) > 150
    # (and a spy against its own villagers, which the hand-made comparisons have but no game: a label's number)
    empty = [(link_["head"] or link_["caption"].split(" (")[0]) for link_ in links if not link_["want"]]
    assert set(empty) <= {"unparsed", "UniEval unparsed", "GameEval: gameeval_spyfall.spy_win_rate"}, empty
    assert len(empty) < len(links) / 10


def test_each_family_links_its_headline_numbers(site):
    """The cells the issue names link, for both models: BotChat's pass@N, Win + Tie and Elo@N (at its N), each
    MT-Bench-101 task score and the average, Ask-Guess, SpyFall and TofuKingdom rows, and every ahead cell."""
    links = [{**link_, "href": unescape(link_["href"])} for link_ in checked_links(site)]
    lead_table = [link_ for link_ in links if link_["section"] == "leaderboard" and not link_["caption"]]
    for m in MODELS:
        lead = {link_["head"]: link_["href"] for link_ in lead_table if f"model={m}&" in link_["href"]}
        assert set(lead) == {"Win + Tie vs GT", "pass@6", "Elo@6", "judged"}, lead  # the leaderboard's N: the largest
        assert lead["Elo@6"] == f"explorer.html#protocol=botchat_arena&model={m}&judge={JUDGE}&n=6"
        assert lead["pass@6"] == f"explorer.html#protocol=botchat_unieval&model={m}&judge={JUDGE}"
        arena = {link_["head"]: link_["href"] for link_ in links if link_["section"] == "arena"
                 and link_["first"] == m and not link_["caption"].startswith("All pairs")}
        assert set(arena) == {"Elo@4", "BT@4", "games@4", "Elo@6", "BT@6", "games@6"}, arena
        assert arena["BT@4"] == f"explorer.html#protocol=botchat_arena&model={m}&judge={JUDGE}&n=4"
        mt = {link_["head"]: link_["href"] for link_ in links if link_["section"] == "mtbench101"
              and f"model={m}&" in link_["href"]}
        assert set(mt) == {"Avg", "CM", "GR", "unparsed", "Avg (OpenCompass rule)"}, mt  # AR: no score, no link
        assert mt["CM"] == f"explorer.html#protocol=mtbench101&model={m}&judge={JUDGE}&key=CM"
    game = [link_["href"] for link_ in links if link_["section"] == "gameeval"]
    for needed in ("explorer.html#protocol=gameeval_askguess&model=bot-a&key=with_description",
                   "explorer.html#protocol=gameeval_spyfall&seat=spy%3Abot-a&seat=villager%3Abot-b",
                   "explorer.html#protocol=gameeval_tofukingdom&model=bot-b"):
        assert needed in game, needed
    ahead = [link_["href"] for link_ in links if link_["section"] == "ahead"]
    assert "explorer.html#protocol=gameeval_spyfall&model=bot-a&model=bot-b&role=spy&seat=villager%3Abot-a" in ahead
    assert "explorer.html#protocol=gameeval_tofukingdom&model=bot-a&model=bot-b&role=queen" in ahead
    assert "explorer.html#protocol=mtbench101&model=bot-a&model=bot-b&judge=judge" in ahead  # the task tally


def test_spyfall_word_pairs_link_their_games():
    """Figure 6's cells (no SpyFall game of the staged lake finished): the seats and the word pair."""
    from dialogbench.gameeval.report import spyfall_tables

    row = {"spy_model": "a", "villager_model": "b", "games": 4, "spy_wins": 1, "word_pairs": 1, "unfinished": 0,
           "discarded": 0, "chat_errors": 0, "missing": 0, "spy_win_rate": 0.25, "spy_living_rounds": 2.0,
           "spy_win_rate_published": None, "spy_living_rounds_published": None}
    pair_ = {"item": "ipad,iphone", "spy_model": "a", "villager_model": "b", "games": 4, "spy_wins": 1,
             "spy_win_rate": 0.25}
    w, l_, figure, detail = spyfall_tables([row], [pair_], {"unfinished": 0, "missing": 0})
    seats = "explorer.html#protocol=gameeval_spyfall&seat=spy%3Aa&seat=villager%3Ab"
    assert figure.rows[0][2].href == seats + "&key=ipad%2Ciphone"
    assert w.rows[0][2].href == l_.rows[0][2].href == seats and w.rows[0][1] == "-"  # a not played: no link
    numbers = detail.rows[0][2:-1]  # missing: no game to show
    assert all(c.href == seats for c in numbers if c != "–") and not hasattr(detail.rows[0][-1], "href")
    assert sum(c == "–" for c in numbers) == 2 and not any(hasattr(c, "href") for c in numbers if c == "–")


def test_markdown_keeps_the_text(site):
    md = site["md"]
    assert "explorer.html" not in md and "](" not in md
    assert "| row − column |" in md  # the matrices are there, as text


def test_a_hostile_model_name_is_escaped_in_the_href():
    """A model named with quotes, markup, & and # in a table cell and in an ahead matrix: the attribute is one
    attribute, no markup is opened, and the name reads back from the address exactly (as the explorer holds it)."""
    for name in HOSTILE:
        href = f"explorer.html#protocol=gameeval_spyfall&model={name}"  # as broken as an address can be made
        cell = report_html.td(link("0.50", href), numeric=True)
        parser = Tables()
        parser.feed(f"<table><tr>{cell}</tr></table>")
        (got,), = parser.tables[0]["rows"]
        assert got["href"] == href and got["text"] == "0.50", name
        assert "<script>" not in cell and cell.count('"') == 6  # class="num", class="ex", href="…"
    rows = [{"family": "gameeval", "leaderboard": "gameeval_spyfall", "metric": "spy_win_rate",
             "slice": f"villager_model={HOSTILE[2]}", "higher_is_better": True, "row_model": a, "col_model": b,
             "model_value": 0.5, "row_value": 0.5, "col_value": 0.4, "difference": 0.1, "ci_low": 0.0,
             "ci_high": 0.2, "mark": "within noise", "reason": None, "p_holm": 0.3, "shared": 9, "model_rank": i}
            for i, (a, b) in enumerate([(x, y) for x in HOSTILE[:4] for y in HOSTILE[:4] if x != y])]
    page = Matrix(rows, families=registry.families()).html("caption")
    assert "<script>" not in page and "</a><a href=x>" not in page
    tables = tables_of(f"<section id='ahead'>{page}</section>")
    hrefs = [unescape(c["href"]) for r in tables[0]["rows"] for c in r[1:] if c["href"]]
    assert len(hrefs) == 12
    found = run_filters({"records": [], "texts": {}, "protocols": {}}, [fragment(h) for h in hrefs])
    pairs = {tuple(f["filters"]["model"]) for f in found}
    assert pairs == {(visible(a), visible(b)) for a in HOSTILE[:4] for b in HOSTILE[:4] if a != b}
    assert {f["filters"]["seat"][0] for f in found} == {f"villager:{HOSTILE[2]}"}


def test_a_linked_cell_is_a_string_and_copies():
    import copy
    import pickle

    cell = link("12.5%\n[1.0%, 30.0%] n=8", "explorer.html#model=a")
    assert isinstance(cell, Linked) and cell == "12.5%\n[1.0%, 30.0%] n=8" and cell.href == "explorer.html#model=a"
    for clone in (copy.deepcopy(cell), pickle.loads(pickle.dumps(cell))):
        assert clone == cell and clone.href == cell.href
    assert link("–", "explorer.html#model=a") == "–" and not isinstance(link("–", "x"), Linked)  # no number
    assert link("3", None) == "3" and not isinstance(link("3", None), Linked)
    table = report_html.table(Table(["Model", "n"], [["a", cell]], "cap", collapsed=True))  # folded: still linked
    assert '<a class="ex" href="explorer.html#model=a">12.5%<br>' in table


@pytest.mark.slow
def test_a_clicked_link_opens_the_explorer_on_its_items(site, browser):  # noqa: F811
    """Links read from the report page as Chromium resolved them, from the file and over ``dialogbench serve``
    (a subprocess): each opens the explorer showing exactly the items behind the number."""
    from tests.explorer.test_explorer_browser import evaluate, load

    links = {link_["href"]: link_["want"] for link_ in checked_links(site)}
    chosen = [h for h in links if "key=CM" in h and "bot-a" in h][:1] + \
             [h for h in links if "seat=spy%3Abot-b" in h][:1] + \
             [h for h in links if "role=queen" in h][:1] + [h for h in links if "n=4" in h and "with=" not in h][:1]
    assert len(chosen) == 4
    for domain in ("Page", "Runtime"):
        browser.send(f"{domain}.enable")
    proc = subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "serve", "--lake", str(site["lake"].root),
                             "--port", "0"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        found = re.search(r" at (http://\S+/) ", proc.stdout.readline())
        assert found, proc.stderr.read()
        seen: list = []
        for base in ((site["out"] / "report.html").as_uri(), found[1] + "report.html"):
            seen += browser.events
            browser.events.clear()
            browser.send("Page.navigate", url=base)  # the report: no script to wait for, its load event
            browser.wait_for("Page.loadEventFired")
            resolved = evaluate(browser, "[...document.querySelectorAll('a.ex')].map(a => [a.getAttribute('href'), "
                                         "a.href])")
            absolute = {unescape(raw): full for raw, full in resolved}
            for href in chosen:
                target = absolute[unescape(href)]
                assert target.startswith(base.rsplit("/", 1)[0] + "/explorer.html#")
                state = load(browser, target, seen)
                assert state["ids"][:50] == links[href][:50] and state["ids"], (base, href)
                assert state["count"].startswith(f"{len(links[href])} record")
        seen += browser.events
        assert page_errors(seen) == []  # under the server's Content-Security-Policy too
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)

