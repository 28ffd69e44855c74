"""MT-Bench-101 answer cells: their keys, item ids, the history a turn is answered with, stored answers.

Two context modes (§3.4, §4); ``answer_episodes`` runs them, ``answer_stage.AnswerTurns`` is the stage:

* ``golden`` (the paper): turn t sees the dataset's user and bot turns before t, then the user
  message of t. Every turn is independent.
* ``self``: turn t sees the model's *own* earlier answers as the assistant turns. A turn that is
  not judged (the first turn of the skip-first-turn tasks) is not answered; its golden bot reply
  stays in the history.

Only turns that ``scoring.is_judged`` says are judged are answered. The cell key is
fingerprint(protocol, answer version, item content, model config, context mode[, answer token limit]): a rerun
answers nothing, a changed model config, dataset turn or answer token limit answers again. The limit
(``config.answer_max_tokens``) is in the key only when it is not the model's own ``max_tokens`` (which the model
config's fingerprint holds already): the same limit gives the same text wherever it is set, so the answers keyed
before answers had a limit of their own keep their keys when it is the model's.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from dialogbench.cells.keys import fingerprint
from dialogbench.lake import Lake
from dialogbench.mtbench101.config import answer_max_tokens
from dialogbench.mtbench101.dataset import Dialogue
from dialogbench.mtbench101.scoring import is_judged
from dialogbench.mtbench101.tables import ANSWER_STAGE as STAGE
from dialogbench.mtbench101.tables import MTBENCH101_ANSWERS

KEY_TAG = "mtbench101"  # leads every answer's cell key: in every stored key, so it never changes
ANSWER_VERSION = "mtbench101-answer-v1"
TABLE = "mtbench101_answers"


def item_fingerprint(dialogue: Dialogue, turn: int) -> str:
    """What the dataset gives turn ``turn``: task, the golden turns before it, its user message (the
    self mode's history is determined by these and the model)."""
    return fingerprint(dialogue.task, str(dialogue.id), [(t.user, t.bot) for t in dialogue.turns[:turn]],
                       dialogue.turns[turn].user)


def answer_key(*, dialogue: Dialogue, turn: int, model_fp: str, context: str, max_tokens: int | None = None) -> str:
    """``max_tokens``: the answer's token limit when it is not the model's own (``key_max_tokens``), else None."""
    parts = [KEY_TAG, ANSWER_VERSION, item_fingerprint(dialogue, turn), model_fp, context]
    return fingerprint(*parts, *([] if max_tokens is None else [max_tokens]))


def key_max_tokens(config, model) -> int | None:
    """What of the answer token limit goes into ``model``'s answer keys: the limit (``config.answer_max_tokens``)
    when it differs from the model's ``max_tokens``, else None (the key answers had before they got their own)."""
    limit = answer_max_tokens(config, model)
    return None if limit == model.max_tokens else limit


def item_id(dialogue_id: int | str, turn: int) -> str:
    return f"{dialogue_id}:{turn}"


@dataclass(frozen=True)
class AnswerCell:
    cell_key: str
    dialogue: Dialogue
    turn: int

    @property
    def item_id(self) -> str:
        return item_id(self.dialogue.id, self.turn)


def history(dialogue: Dialogue, turn: int, *, context: str, answers: dict[int, str] | None = None) -> list[tuple[str, str]]:
    """The (user, assistant) turns before ``turn`` as the model saw them: golden bot replies, or in
    self mode the model's own ``answers`` (by turn) for judged turns and golden replies for the rest.
    Raises ``KeyError`` when a self-mode answer it needs is missing."""
    pairs = []
    for i, t in enumerate(dialogue.turns[:turn]):
        if context == "self" and is_judged(task=dialogue.task, turn=i):
            pairs.append((t.user, (answers or {})[i]))
        else:
            pairs.append((t.user, t.bot))
    return pairs


def conversation(pairs: list[tuple[str, str]], user_message: str) -> list[dict[str, str]]:
    messages = []
    for user, bot in pairs:
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": bot}]
    return messages + [{"role": "user", "content": user_message}]



def stored_answers(lake: Lake, keys: list[str]) -> dict[str, str]:
    """Stored answers by cell key (the newest if a key was ever written twice)."""
    with lake.connect() as con:
        con.register("keys", pa.table({"cell_key": pa.array(keys, pa.string())}))
        rows = con.sql(f"""
            SELECT a.cell_key, a.answer FROM {lake.relation_sql(TABLE, MTBENCH101_ANSWERS)} a SEMI JOIN keys USING (cell_key)
            QUALIFY row_number() OVER (PARTITION BY a.cell_key ORDER BY a.created_at DESC) = 1
        """).fetchall()
    return dict(rows)
