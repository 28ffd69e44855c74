"""Human labels: a person's answers to judged items, imported into the lake and compared with the judges as one more
judge, ``human:<source>`` (agreement.py: Cohen's kappa, Spearman's rho of the model rankings, the disagreements).

The file: CSV (a header row naming at least ``item``, ``protocol``, ``label``; other columns are ignored) or JSONL
(one object per line with those keys), by its suffix (``.csv``; ``.jsonl`` / ``.ndjson``). ``item`` is the
``item`` column of the ``judge_agreement_items`` view (``dialogbench query "select distinct protocol, item from
judge_agreement_items"``), the judged item without its judge:

=================  ===============================================  ===============================================
protocol           item                                             label
=================  ===============================================  ===============================================
botchat_unieval    ``<seed>:<model>@<n judged>``  (``MT-12:bot-a@8``)  ``Yes`` / ``No``; ``Yes 5`` also names the first
                                                                    AI utterance (1-based; kappa reads Yes / No)
botchat_arena      ``<seed>:<first> vs <second>@<n>``, the order    the conversation(s) involving an AI, as the
                   shown (Conversation 1 is ``<first>``)            judge answers: ``conversation_1``,
                                                                    ``conversation_2``, ``both``, ``neither``
botchat_gteval     ``<seed>:<model> vs human@<L>`` or               the same four
                   ``<seed>:human vs <model>@<L>``
mtbench101_judge   ``<dialogue id>:<turn>:<model>`` (turn 0-based)  a rating, an integer 1..10
=================  ===============================================  ===============================================

Labels are case-insensitive (``yes``, ``Conversation 1``, ``Conversation_2`` read as the judge's words). A row whose
protocol is none of these, whose item is empty or whose label does not read is an error naming the file, the row
(a CSV's header is row 1; a JSONL's first line is row 1) and the field; the import writes nothing until every row
reads. The same (protocol, item) twice in a file is an error naming both rows. An item that is not on the board
(no current cell of any judge names it: a typo, another board's model, a length no config judged) is not an error:
the import counts it and names a few; it is stored, and pairs once the item is judged.

An import is one file of the ``judge_labels`` table per source, replaced by each import of that source: importing a
file twice keeps one copy of its labels, and importing an edited file replaces the source's labels with the new
ones. The source defaults to the file's name without its suffix."""

from __future__ import annotations

import csv
import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pyarrow as pa

from dialogbench.judge_checks.label_tables import LABELS, LABELS_TABLE
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect
from dialogbench.lake.store import safe_name

FIELDS = ("item", "protocol", "label")
PROTOCOLS = ("botchat_unieval", "botchat_arena", "botchat_gteval", "mtbench101_judge")
HUMAN = "human:"  # a source's labels are compared as the judge 'human:<source>'
SHOWN = 5  # items not on the board named in the summary
MAX_ERRORS = 20  # errors listed in one LabelError (the rest counted)
_VERDICTS = {"conversation_1": "conversation_1", "conversation 1": "conversation_1", "1": "conversation_1",
             "conversation_2": "conversation_2", "conversation 2": "conversation_2", "2": "conversation_2",
             "both": "both", "neither": "neither"}
_UNIEVAL = re.compile(r"(yes|no)(?:[\s:,]+(\d+))?", re.I)


class LabelError(ValueError):
    """A labels file that cannot be imported: each problem names the file, the row and the field."""


@dataclass(frozen=True)
class Label:
    """One row of a labels file, read: ``answer`` in the judge's answer words (``answers()``: 'Yes 5', 'No',
    'conversation_1', '7'), ``score`` the rating (MT-Bench-101) else None."""

    row: int
    protocol: str
    item: str
    label: str
    answer: str
    score: float | None


@dataclass(frozen=True)
class ImportSummary:
    """What ``import_labels`` did: ``labels`` rows stored for ``source`` (compared as judge ``judge``), ``replaced``
    the rows a previous import of the source had (now gone), per protocol how many were stored, how many items are on
    the board and which are not (``not_on_board``, the first ``SHOWN`` of them in ``missing_examples``)."""

    file: str
    source: str
    judge: str
    labels: int
    replaced: int
    on_board: int
    not_on_board: int
    per_protocol: dict[str, int] = field(default_factory=dict)
    missing_examples: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """The summary as the CLI prints it."""
        per = ", ".join(f"{p} {n}" for p, n in sorted(self.per_protocol.items())) or "none"
        out = [f"{self.file}: {self.labels} labels imported as {self.judge} ({per})"
               + (f", replacing the {self.replaced} of the previous import of {self.source!r}" if self.replaced else "")]
        out.append(f"{self.on_board} on the board's current items, {self.not_on_board} not"
                   + (" (kept; they pair once judged): " + ", ".join(self.missing_examples)
                      + (", ..." if self.not_on_board > len(self.missing_examples) else "")
                      if self.not_on_board else ""))
        return out


def parse_label(*, protocol: str, label: str) -> tuple[str, float | None]:
    """``label`` of ``protocol`` in the judge's answer words and its score (a rating; else None); raises ValueError
    saying what the protocol expects."""
    text = " ".join(str(label).split())
    if protocol == "botchat_unieval":
        m = _UNIEVAL.fullmatch(text)
        if m is None:
            raise ValueError(f"expected Yes or No (optionally 'Yes <index>'), not {label!r}")
        choice = m.group(1).capitalize()
        if m.group(2) is not None and choice == "No":
            raise ValueError(f"'No' names no AI utterance, not {label!r}")
        if m.group(2) is not None and int(m.group(2)) < 1:
            raise ValueError(f"the AI utterance's index is 1-based, not {label!r}")
        return (f"{choice} {int(m.group(2))}" if m.group(2) else choice), None
    if protocol in ("botchat_arena", "botchat_gteval"):
        verdict = _VERDICTS.get(text.lower())
        if verdict is None:
            raise ValueError(f"expected conversation_1, conversation_2, both or neither, not {label!r}")
        return verdict, None
    if protocol == "mtbench101_judge":
        try:
            number = float(text)
        except ValueError:
            number = float("nan")
        if not number.is_integer() or not 1 <= number <= 10:
            raise ValueError(f"expected a rating, an integer from 1 to 10, not {label!r}")
        return str(int(number)), float(number)
    raise ValueError(f"unknown protocol {protocol!r} (one of {', '.join(PROTOCOLS)})")


def _rows(path: Path) -> list[tuple[int, dict]]:
    """``path``'s rows as (row number, fields); raises LabelError for a file that is neither CSV nor JSONL, lacks a
    column, or holds a line that is not a JSON object."""
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):
        raise LabelError(f"{path}: a labels file is .csv or .jsonl (one JSON object per line), not "
                         f"{path.suffix or 'no suffix'!r}")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise LabelError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise LabelError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if suffix == ".csv":
        reader = csv.DictReader(text.splitlines())
        missing = [f for f in FIELDS if f not in (reader.fieldnames or [])]
        if missing:
            raise LabelError(f"{path}: row 1 (the header): no column {', '.join(missing)} (the columns are "
                             f"{', '.join(FIELDS)}; found {', '.join(reader.fieldnames or []) or 'none'})")
        return [(number, row) for number, row in enumerate(reader, start=2)
                if any((v or "").strip() for k, v in row.items() if k is not None)]
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LabelError(f"{path}: row {number}: not JSON ({exc.msg} at column {exc.colno})") from exc
        if not isinstance(value, dict):
            raise LabelError(f"{path}: row {number}: not a JSON object with {', '.join(FIELDS)}")
        rows.append((number, value))
    return rows


def read_labels(*, path: str | Path) -> list[Label]:
    """Every label of ``path`` (CSV or JSONL, see the module's docstring); raises LabelError listing each bad row
    (file, row, field, what was expected) and each (protocol, item) given twice."""
    path = Path(path)
    labels: list[Label] = []
    errors: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    for number, row in _rows(path):
        where = f"{path}: row {number}"
        values = {}
        for name in FIELDS:
            value = row.get(name)
            if value is None or (isinstance(value, str) and not value.strip()):
                errors.append(f"{where}, field {name}: empty")
            elif not isinstance(value, (str, int, float)) or isinstance(value, bool):
                errors.append(f"{where}, field {name}: {value!r} is not text")
            else:
                values[name] = str(value).strip()
        if len(values) < len(FIELDS):
            continue
        if values["protocol"] not in PROTOCOLS:
            errors.append(f"{where}, field protocol: unknown protocol {values['protocol']!r} (one of {', '.join(PROTOCOLS)})")
            continue
        try:
            answer, score = parse_label(protocol=values["protocol"], label=values["label"])
        except ValueError as exc:
            errors.append(f"{where}, field label: {exc}")
            continue
        key = (values["protocol"], values["item"])
        if key in seen:
            errors.append(f"{where}, field item: {values['item']!r} of {values['protocol']} is labelled on row "
                          f"{seen[key]} already")
            continue
        seen[key] = number
        labels.append(Label(number, values["protocol"], values["item"], values["label"], answer, score))
    if errors:
        more = f"\n... and {len(errors) - MAX_ERRORS} more" if len(errors) > MAX_ERRORS else ""
        raise LabelError(f"{len(errors)} bad row{'s' if len(errors) != 1 else ''}, nothing imported:\n"
                         + "\n".join(errors[:MAX_ERRORS]) + more)
    return labels


def file_name(source: str) -> str:
    """The one file of ``judge_labels`` holding ``source``'s labels (each import replaces it)."""
    return f"source-{safe_name(source)[:40]}-{hashlib.sha256(source.encode()).hexdigest()[:12]}.parquet"


def board_items(*, lake: Lake, board: str | None = None) -> set[tuple[str, str]]:
    """The (protocol, item) of every current judged cell of ``board`` (None: the lake's default board)."""
    with connect(lake, board=board) as con:
        return {(p, i) for p, i in con.execute("select distinct protocol, item from judge_agreement_items").fetchall()}


def import_labels(*, lake: Lake, path: str | Path, source: str | None = None,
                  board: str | None = None) -> ImportSummary:
    """Read ``path`` (``read_labels``: raises LabelError, writing nothing, on a bad row), store its labels as the
    source's (``source``, default the file's name without its suffix) in ``judge_labels``, replacing what an earlier
    import of that source stored, and say how many items are on ``board``'s current cells (None: the default
    board). ``lake``: opened with its layout (``registry.open_lake``)."""
    path = Path(path)
    source = (source if source is not None else path.stem).strip()
    if not source:
        raise LabelError(f"{path}: the source is empty (name it: --source NAME)")
    labels = read_labels(path=path)
    judge = HUMAN + source
    name = file_name(source)
    replaced = stored_count(lake=lake, name=name)
    now = datetime.now(timezone.utc)
    rows = [{"source": source, "judge": judge, "protocol": label.protocol, "item": label.item, "label": label.label,
             "answer": label.answer, "score": label.score, "row": label.row, "file": str(path), "imported_at": now}
            for label in labels]
    lake.write(LABELS_TABLE.name, pa.Table.from_pylist(rows, schema=LABELS), name=name)
    on_board = board_items(lake=lake, board=board)
    missing = [f"{label.protocol} {label.item}" for label in labels if (label.protocol, label.item) not in on_board]
    per: dict[str, int] = {}
    for label in labels:
        per[label.protocol] = per.get(label.protocol, 0) + 1
    return ImportSummary(file=str(path), source=source, judge=judge, labels=len(labels), replaced=replaced,
                         on_board=len(labels) - len(missing), not_on_board=len(missing), per_protocol=per,
                         missing_examples=tuple(missing[:SHOWN]))


def stored_count(*, lake: Lake, name: str) -> int:
    """The rows an import stored under ``name`` (a source's file in a folder lake), 0 when none did."""
    rows = lake.read_named(LABELS_TABLE.name, name)
    return 0 if rows is None else rows.num_rows


def stored_labels(*, lake: Lake) -> list[dict]:
    """Every stored label (every source's), as dicts of ``LABELS``' columns."""
    return lake.read(LABELS_TABLE.name, LABELS).to_pylist()


# --- the labels beside the judges: the rows judge_pairs has, for each pair a human label is in -------------------

PAIR_COLUMNS = ("protocol", "item", "judge_a", "judge_b", "cluster", "item_id", "side", "other", "shown_first", "n",
                "output_key", "parsed_a", "parsed_b", "answer_a", "answer_b", "category_a", "category_b", "score_a",
                "score_b", "agree", "cell_key_a", "cell_key_b")
ITEM_SHARED = ("cluster", "item_id", "side", "other", "shown_first", "n", "output_key")


def category_of(*, protocol: str, answer: str | None, score: float | None, shown_first: str | None,
                side: str | None) -> str | None:
    """What agreement compares, as judge_agreement_items' ``category`` computes it for the judges' answers (the same
    rule, for a label: tests/judge_checks/test_labels.py checks both agree on every judged cell)."""
    if answer is None:
        return None
    if protocol == "botchat_unieval":
        return answer.split(" ")[0]
    if protocol in ("botchat_arena", "botchat_gteval"):
        if answer in ("both", "neither"):
            return "tie"
        return "lose" if (answer == "conversation_1") == (shown_first == side) else "win"
    if score is not None:
        return str(int(score))
    return answer


def human_pairs(*, con: duckdb.DuckDBPyConnection, lake: Lake) -> list[dict]:
    """judge_pairs' rows for the stored human labels: each label of an item on ``con``'s board (its current
    judged cells) against each judge's cell of the item, and against another source's label of it, the two judges
    in name order (``judge_a`` < ``judge_b``). A label pairs with every judge's cell of its item (whatever output the
    judge read: the label names the item, not a generation key); a label's cell_key is null."""
    labels = stored_labels(lake=lake)
    if not labels:
        return []
    wanted = {(label["protocol"], label["item"]) for label in labels}
    relation = con.execute("select * from judge_agreement_items order by protocol, item, judge")
    columns = [d[0] for d in relation.description]
    by_item: dict[tuple[str, str], list[dict]] = {}
    for values in relation.fetchall():
        row = dict(zip(columns, values))
        if (row["protocol"], row["item"]) in wanted:
            by_item.setdefault((row["protocol"], row["item"]), []).append(row)
    humans: dict[tuple[str, str], list[dict]] = {}
    for label in labels:
        key = (label["protocol"], label["item"])
        if key not in by_item:
            continue
        shape = by_item[key][0]
        humans.setdefault(key, []).append({
            **{c: shape[c] for c in ITEM_SHARED}, "protocol": label["protocol"], "item": label["item"],
            "judge": label["judge"], "parsed": True, "answer": label["answer"], "score": label["score"],
            "cell_key": None, "category": category_of(protocol=label["protocol"], answer=label["answer"],
                                                      score=label["score"], shown_first=shape["shown_first"],
                                                      side=shape["side"])})
    pairs = []
    for key, people in sorted(humans.items()):
        others = by_item[key] + people
        for person in people:
            for other in others:
                if other["judge"] == person["judge"] or (other in people and other["judge"] < person["judge"]):
                    continue  # a pair of two labels is made once, from the first in name order
                a, b = sorted((person, other), key=lambda r: r["judge"])
                pairs.append(_pair(a, b))
    return sorted(pairs, key=lambda p: (p["protocol"], p["judge_a"], p["judge_b"], p["item"]))


def _pair(a: dict, b: dict) -> dict:
    """One judge_pairs row of two judges' rows of an item (``a`` the first judge by name); the item's columns are the
    judge's where one is a label (the output it read)."""
    shape = b if a["cell_key"] is None and b["cell_key"] is not None else a
    both = a["category"] is not None and b["category"] is not None
    return {"protocol": a["protocol"], "item": a["item"], "judge_a": a["judge"], "judge_b": b["judge"],
            **{c: shape[c] for c in ITEM_SHARED}, "parsed_a": a["parsed"], "parsed_b": b["parsed"],
            "answer_a": a["answer"], "answer_b": b["answer"], "category_a": a["category"],
            "category_b": b["category"], "score_a": a["score"], "score_b": b["score"],
            "agree": (a["category"] == b["category"]) if both else None, "cell_key_a": a["cell_key"],
            "cell_key_b": b["cell_key"]}
