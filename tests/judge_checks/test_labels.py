"""Human labels: the documented CSV / JSONL read into the judge's answer words, bad rows named by file, row and field
(nothing imported), items not on the board counted, an import idempotent per source, and the labels compared with a
judge as one more judge ('human:<source>') in the same pairs, kappa and disagreements."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import pytest

from dialogbench.run import registry
from dialogbench.judge_checks import agreement
from dialogbench.judge_checks.family import FAMILY
from dialogbench.judge_checks.label_tables import LABELS_TABLE
from dialogbench.judge_checks.labels import (LabelError, category_of, human_pairs, import_labels, parse_label,
                                             read_labels, stored_labels)
from dialogbench.lake.catalog import connect
from tests.judge_checks.test_agreement import BOARD, judged_lake, rows_of

FLIPPED = {"Yes": "No", "No": "Yes"}


@pytest.fixture(scope="module")
def one_judge(tmp_path_factory) -> Path:
    lake_dir, _ = judged_lake(tmp_path_factory.mktemp("labels"), ("judge-a",))
    return lake_dir


def board_items(lake_dir: Path) -> list[dict]:
    with connect(registry.open_lake(lake_dir), board=BOARD) as con:
        return rows_of(con, "select * from judge_agreement_items order by protocol, item")


def write_csv(path: Path, rows: list[dict]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["item", "protocol", "label", "note"])
        writer.writeheader()
        for row in rows:
            writer.writerow({"note": "", **row})
    return path


def labels_from(items: list[dict]) -> tuple[list[dict], dict]:
    """A person who answers as judge-a, except on the first UniEval item (the other choice) and the first rated turn
    (one point higher); plus one item no judge judged."""
    rows, changed = [], {}
    for r in items:
        label = r["answer"]
        if r["protocol"] == "botchat_unieval" and "unieval" not in changed:
            label = FLIPPED[r["category"]]
            changed["unieval"] = r["item"]
        elif r["protocol"] == "mtbench101_judge" and "rating" not in changed:
            label = str(int(r["score"]) % 10 + 1)
            changed["rating"] = r["item"]
        rows.append({"item": r["item"], "protocol": r["protocol"], "label": label})
    rows.append({"item": "MT-999:bot-a@6", "protocol": "botchat_unieval", "label": "no"})
    return rows, changed


def test_no_labels_and_one_judge_give_no_pairs(one_judge):
    lake = registry.open_lake(one_judge)
    with connect(lake, board=BOARD) as con:
        assert human_pairs(con=con, lake=lake) == [] and agreement.read_pairs(con=con, lake=lake) == []


def test_imported_labels_are_compared_with_the_judge(one_judge, tmp_path):
    items = board_items(one_judge)
    rows, changed = labels_from(items)
    path = write_csv(tmp_path / "anno.csv", rows)
    lake = registry.open_lake(one_judge)
    summary = import_labels(lake=lake, path=path)
    assert (summary.source, summary.judge, summary.labels, summary.replaced) == ("anno", "human:anno", len(rows), 0)
    assert (summary.on_board, summary.not_on_board) == (len(items), 1)
    assert summary.missing_examples == ("botchat_unieval MT-999:bot-a@6",)
    assert summary.per_protocol["botchat_arena"] == sum(1 for r in items if r["protocol"] == "botchat_arena")
    assert "1 not (kept; they pair once judged): botchat_unieval MT-999:bot-a@6" in "\n".join(summary.lines())

    with connect(lake, board=BOARD) as con:
        pairs = [p for p in agreement.read_pairs(con=con, lake=lake) if "human:anno" in (p["judge_a"], p["judge_b"])]
    assert len(pairs) == len(items)  # each label beside judge-a's verdict of its item; the unknown item pairs nowhere
    assert {(p["judge_a"], p["judge_b"]) for p in pairs} == {("human:anno", "judge-a")}
    kappas = {k.protocol: k for k in agreement.kappa(pairs=pairs)}
    assert kappas["botchat_arena"].kappa == 1.0 and kappas["botchat_gteval"].kappa == 1.0  # labels copied
    unieval = kappas["botchat_unieval"]
    assert unieval.n == 9 and unieval.observed == pytest.approx(8 / 9) and unieval.kappa < 1
    assert kappas["mtbench101_judge"].weighted and 0 < kappas["mtbench101_judge"].kappa < 1
    found = agreement.disagreements(pairs=pairs)
    assert {(d.protocol, d.item) for d in found} == {("botchat_unieval", changed["unieval"]),
                                                     ("mtbench101_judge", changed["rating"])}
    flipped = next(d for d in found if d.protocol == "botchat_unieval")
    assert flipped.cell_key_a is None and flipped.cell_key_b is not None  # the label has no cell; the judge's does
    assert flipped.href.startswith("explorer.html#protocol=botchat_unieval&key=")
    rankings = {r.protocol: r for r in agreement.ranking_agreement(pairs=pairs)}
    assert rankings["botchat_arena"].rho == 1.0 and rankings["botchat_arena"].models == 3


def test_an_import_is_idempotent_and_a_new_one_replaces_the_source(one_judge, tmp_path):
    items = board_items(one_judge)
    rows, _ = labels_from(items)
    path = write_csv(tmp_path / "twice.csv", rows)
    lake = registry.open_lake(one_judge)
    import_labels(lake=lake, path=path, source="twice")
    again = import_labels(lake=lake, path=path, source="twice")
    mine = [r for r in stored_labels(lake=lake) if r["source"] == "twice"]
    assert len(mine) == len(rows) and again.replaced == len(rows)
    with connect(lake, board=BOARD) as con:
        pairs = [p for p in human_pairs(con=con, lake=lake) if "human:twice" in (p["judge_a"], p["judge_b"])]
    assert len(pairs) == len({(p["protocol"], p["item"], p["judge_a"], p["judge_b"]) for p in pairs})
    # an edited file replaces the source's labels; another source's are left alone
    write_csv(path, rows[:3])
    edited = import_labels(lake=lake, path=path, source="twice")
    assert (edited.labels, edited.replaced) == (3, len(rows))
    assert sum(1 for r in stored_labels(lake=lake) if r["source"] == "twice") == 3
    # two people: their labels pair with each other too (one pair per item, names in order)
    other = write_csv(tmp_path / "other.csv", rows[:3])
    import_labels(lake=lake, path=other, source="zed")
    with connect(lake, board=BOARD) as con:
        pairs = human_pairs(con=con, lake=lake)
    both = [p for p in pairs if (p["judge_a"], p["judge_b"]) == ("human:twice", "human:zed")]
    assert len(both) == 3 and all(p["agree"] for p in both)


def test_a_jsonl_file_reads_like_a_csv(one_judge, tmp_path):
    items = board_items(one_judge)[:4]
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(json.dumps({"item": r["item"], "protocol": r["protocol"], "label": r["answer"]})
                              for r in items) + "\n\n")
    assert [(label.row, label.item, label.answer) for label in read_labels(path=path)] == [
        (i + 1, r["item"], r["answer"]) for i, r in enumerate(items)]


def test_bad_rows_are_named_by_file_row_and_field_and_nothing_is_imported(one_judge, tmp_path):
    path = write_csv(tmp_path / "bad.csv", [
        {"item": "MT-1:bot-a@6", "protocol": "botchat_unieval", "label": "Yes"},       # row 2: good
        {"item": "MT-1:bot-b@6", "protocol": "botchat_unieval", "label": "maybe"},     # row 3
        {"item": "MT-1:bot-c@6", "protocol": "botchat_uni", "label": "No"},            # row 4
        {"item": "", "protocol": "mtbench101_judge", "label": "7"},                    # row 5
        {"item": "1:0:bot-a", "protocol": "mtbench101_judge", "label": "11"},          # row 6
        {"item": "MT-1:bot-a@6", "protocol": "botchat_unieval", "label": "No"},        # row 7: row 2's item again
    ])
    lake = registry.open_lake(one_judge)
    before = len(stored_labels(lake=lake)) if lake.has(LABELS_TABLE.name) else 0
    with pytest.raises(LabelError) as caught:
        import_labels(lake=lake, path=path, source="bad")
    message = str(caught.value)
    assert message.startswith("5 bad rows, nothing imported:")
    assert f"{path}: row 3, field label: expected Yes or No" in message and "'maybe'" in message
    assert f"{path}: row 4, field protocol: unknown protocol 'botchat_uni'" in message
    assert f"{path}: row 5, field item: empty" in message
    assert f"{path}: row 6, field label: expected a rating, an integer from 1 to 10, not '11'" in message
    assert f"{path}: row 7, field item: 'MT-1:bot-a@6' of botchat_unieval is labelled on row 2 already" in message
    after = len(stored_labels(lake=lake)) if lake.has(LABELS_TABLE.name) else 0
    assert after == before and not any(r["source"] == "bad" for r in (stored_labels(lake=lake) if after else []))


def test_a_file_without_the_columns_or_of_another_kind_is_refused(tmp_path):
    header = tmp_path / "header.csv"
    header.write_text("item,label\nMT-1:bot-a@6,Yes\n")
    with pytest.raises(LabelError, match=r"header.csv: row 1 \(the header\): no column protocol"):
        read_labels(path=header)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"item": "a", "protocol": "botchat_unieval", "label": "Yes"}\n{"item": \n')
    with pytest.raises(LabelError, match=r"broken.jsonl: row 2: not JSON"):
        read_labels(path=broken)
    with pytest.raises(LabelError, match=r"labels.txt: a labels file is .csv or .jsonl"):
        read_labels(path=tmp_path / "labels.txt")


def test_labels_read_into_the_judges_words():
    assert parse_label(protocol="botchat_unieval", label=" yes ") == ("Yes", None)
    assert parse_label(protocol="botchat_unieval", label="Yes 5") == ("Yes 5", None)
    assert parse_label(protocol="botchat_arena", label="Conversation 2") == ("conversation_2", None)
    assert parse_label(protocol="botchat_gteval", label="NEITHER") == ("neither", None)
    assert parse_label(protocol="mtbench101_judge", label="7") == ("7", 7.0)
    for protocol, label in (("botchat_unieval", "No 3"), ("botchat_arena", "conversation_3"),
                            ("mtbench101_judge", "7.5"), ("mtbench101_judge", "0")):
        with pytest.raises(ValueError):
            parse_label(protocol=protocol, label=label)


def test_a_labels_category_is_the_views_rule(one_judge):
    """category_of (labels) and judge_agreement_items.category (judges) read an answer alike, on every judged cell."""
    items = board_items(one_judge)
    assert {r["protocol"] for r in items} == {"botchat_unieval", "botchat_arena", "botchat_gteval", "mtbench101_judge"}
    for r in items:
        assert category_of(protocol=r["protocol"], answer=r["answer"], score=r["score"], shown_first=r["shown_first"],
                           side=r["side"]) == r["category"], r


def test_the_catalog_builds_with_the_labels_table_registered(one_judge, tmp_path, monkeypatch):
    """What the lead's one-line registration gives: the table among the lake's, the views unchanged, imports read."""
    monkeypatch.setitem(registry._FAMILIES, FAMILY.name,
                        dataclasses.replace(FAMILY, tables=(*FAMILY.tables, LABELS_TABLE)))
    lake = registry.open_lake(one_judge)
    assert LABELS_TABLE.name in lake.layout.tables
    item = board_items(one_judge)[0]
    path = write_csv(tmp_path / "registered.csv", [{"item": item["item"], "protocol": item["protocol"],
                                                    "label": item["answer"]}])
    assert import_labels(lake=lake, path=path).on_board == 1
    with connect(lake, board=BOARD) as con:
        assert any(p["judge_a"] == "human:registered" for p in human_pairs(con=con, lake=lake))


def test_the_cli_imports_a_file_and_names_a_bad_row(one_judge, tmp_path, capsys):
    from dialogbench.cli import main

    rows, _ = labels_from(board_items(one_judge))
    good = write_csv(tmp_path / "cli.csv", rows)
    assert main(["labels", "import", str(good), "--lake", str(one_judge), "--source", "cli", "--board", BOARD]) == 0
    out = capsys.readouterr().out
    assert f"{good}: {len(rows)} labels imported as human:cli" in out and "1 not (kept" in out
    bad = write_csv(tmp_path / "bad.csv", [{"item": "MT-1:bot-a@6", "protocol": "botchat_unieval", "label": "maybe"}])
    assert main(["labels", "import", str(bad), "--lake", str(one_judge)]) == 2
    assert f"{bad}: row 2, field label" in capsys.readouterr().err
