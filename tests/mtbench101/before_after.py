"""Before / after the fidelity changes of MT-Bench-101 (issue 35), measured with the real stages on a few dialogues,
scripted models and a rule-based judge:

* before: answers cut at the model's ``max_tokens`` (256, configs/nightly.yaml's chatbots), the MR / GR reference the
  judged turn's golden reply alone (``answer_max_tokens: null``, ``reference: turn``);
* after: the defaults (``answer_max_tokens`` 4096, at most half the model's 8192 window; ``reference: dialogue``).

Both carry the framing line (render version 2): it has no switch. The chatbot's replies cycle through 120, 240, 360
and 480 words (a scripted token is a word), each ending with ``END``; the judge rates a turn 8 when the answer it is
shown ends with ``END`` and 3 when it stops short (a judge that marks down an answer cut mid-way), whatever the
reference. So the score moves by the truncation alone, by construction; the reference form moves only what the judge
reads (its prompt's words), which is reported as such. The same lake takes both runs, so the cells the second one
recomputes are what switching costs.

    .venv/bin/python -m tests.mtbench101.before_after [--tasks MR,GR,CM,SI] [--limit 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from statistics import fmean

import yaml

from dialogbench.run import registry
from dialogbench.backends import clear_backends
from dialogbench.backends.base import Completion
from dialogbench.lake.catalog import connect
from dialogbench.mtbench101.config import answerers
from dialogbench.run.runs import new_run_id, sum_reports
from tests import stage_runner as stages
from tests.conftest import ScriptedCalls, scripted_calls_patched

ROOT = Path(__file__).resolve().parents[2]
LENGTHS = (120, 240, 360, 480)  # words of the chatbot's replies, cycled
END = "END"
COMPLETE, CUT = 8, 3
SETTINGS = {"before": {"answer_max_tokens": None, "reference": "turn"},
            "after": {"answer_max_tokens": 4096, "reference": "dialogue"}}


def reply(words: int) -> str:
    return " ".join(f"w{i}" for i in range(words - 1)) + f" {END}"


def config_data(lake: Path, tasks: list[str], limit: int, settings: dict) -> dict:
    bot = {"name": "verbose", "backend": "scripted", "script": [reply(n) for n in LENGTHS], "max_tokens": 256,
           "context_window": 8192}
    judge = {"name": "rule-judge", "backend": "scripted", "script": ["Rating: [[5]]"], "max_tokens": 64,
             "context_window": 128000}
    return {"lake": str(lake), "models": [bot], "judges": [judge],
            "mtbench101": {"enabled": True, "judge": "rule-judge", "tasks": tasks, "limit": limit, **settings},
            "judge_checks": {"probes": 0}}


def rated(conversation: list[dict]) -> str:
    """The rule judge: 8 for a shown answer that ends with END, 3 for one cut short."""
    judged = conversation[-1]["content"].split("\n\nThe reference solution is:")[0]
    answer = judged.removesuffix("\n***").rsplit("\n\nAssistant: ", 1)[1]
    return f"Rule judge.\nRating: [[{COMPLETE if answer.endswith(END) else CUT}]]"


@contextlib.contextmanager
def rule_judge() -> Iterator[ScriptedCalls]:
    """The judge model answers by ``rated`` (its prompt's tokens, 5 completion tokens); every call is recorded."""

    def generate(backend, conversations, script):
        if backend.model.name != "rule-judge":
            return script(conversations)
        return [Completion(text=rated(c), prompt_tokens=backend.count_tokens(c), completion_tokens=5)
                for c in conversations]

    with scripted_calls_patched() as calls:
        calls.instead = generate
        yield calls


def run(config) -> dict:
    run_id = new_run_id()
    clear_backends()
    answered = sum(stages.answer(config, m.name, run_id).computed for m in answerers(config))
    chunks, planned = stages.plan_judging(config, run_id)
    judged = sum_reports([planned, *(stages.judge(config, c, run_id) for c in chunks)]).computed
    with connect(registry.open_lake(config.lake), board=config.board) as con:
        def rows(sql: str) -> list[dict]:
            rel = con.execute(sql)
            return [dict(zip([d[0] for d in rel.description], r)) for r in rel.fetchall()]

        tasks = rows("select task, score, dialogues from mtbench101_tasks")
        cut = rows("select task, answers, truncated, max_tokens from mtbench101_truncation")
    return {"answers_computed": answered, "judgments_computed": judged,
            "scores": {r["task"]: r["score"] for r in tasks}, "dialogues": {r["task"]: r["dialogues"] for r in tasks},
            "cut": {r["task"]: (r["truncated"], r["answers"]) for r in cut},
            "max_tokens": sorted({r["max_tokens"] for r in cut})}


def measure(work: Path, tasks: list[str], limit: int) -> dict:
    """Both runs on one lake under ``work``: each side's task scores, cut answers, judge prompt words per task (the
    scripted count: words + 4 per message) and the cells it computed."""
    out = {}
    for side, settings in SETTINGS.items():
        folder = work / side
        folder.mkdir(parents=True)
        path = folder / "config.yaml"  # one name: both publish to the same board, as successive nights do
        path.write_text(yaml.safe_dump(config_data(work / "lake", tasks, limit, settings), sort_keys=False))
        config = registry.load_config(path, None, root=ROOT)
        with rule_judge() as calls:
            result = run(config)
        words: dict[str, list[int]] = {}
        for conversation in calls.sent("rule-judge"):
            task = next(t for t in tasks if conversation[0]["content"] == _system(t))
            words.setdefault(task, []).append(sum(len(m["content"].split()) + 4 for m in conversation))
        result["judge_prompt_words"] = {t: round(fmean(w)) for t, w in words.items()}
        out[side] = result
    out["avg"] = {side: round(fmean(v for v in out[side]["scores"].values() if v is not None), 3)
                  for side in SETTINGS}
    return out


def reference_sizes(dataset: Path = ROOT / "data_lake/raw/mtbench101/mtbench101.jsonl") -> dict:
    """Over every judged MR and GR turn of the dataset: the turns, and the mean words of the reference shown in each
    form and of the judge's user message with the golden reply as the answer (what the form alone changes)."""
    from dialogbench.mtbench101.dataset import read_dialogues
    from dialogbench.mtbench101.prompts import REFERENCE_FORMS, REFERENCE_TASKS, judge_messages, reference_text
    from dialogbench.mtbench101.scoring import is_judged

    turns = [(d, i) for d in read_dialogues(dataset) if d.task in REFERENCE_TASKS for i in range(len(d.turns))
             if is_judged(task=d.task, turn=i)]
    out: dict = {"turns": len(turns)}
    for form in REFERENCE_FORMS:
        texts = [reference_text(form, d.turns[:i + 1]) for d, i in turns]
        messages = [judge_messages(task=d.task, history_turns=d.turns[:i], user_message=d.turns[i].user,
                                   answer=d.turns[i].bot, reference=text)[1]["content"]
                    for (d, i), text in zip(turns, texts)]
        out[form] = {"reference_words": round(fmean(len(t.split()) for t in texts), 1),
                     "user_message_words": round(fmean(len(m.split()) for m in messages), 1)}
    return out


def _system(task: str) -> str:
    from dialogbench.mtbench101.prompts import system_prompt

    return system_prompt(task)


def table(result: dict, tasks: list[str]) -> str:
    lines = ["task  score before -> after  cut before -> after  judge prompt words before -> after"]
    for t in tasks:
        b, a = result["before"], result["after"]
        lines.append(f"{t:<4}  {b['scores'].get(t) or 0:5.2f} -> {a['scores'].get(t) or 0:5.2f}      "
                     f"{'%d/%d' % b['cut'].get(t, (0, 0)):>5} -> {'%d/%d' % a['cut'].get(t, (0, 0)):<5}       "
                     f"{b['judge_prompt_words'].get(t, 0):>5} -> {a['judge_prompt_words'].get(t, 0)}")
    lines.append(f"mean over these tasks: {result['avg']['before']:.2f} -> {result['avg']['after']:.2f}; "
                 f"max_tokens {result['before']['max_tokens']} -> {result['after']['max_tokens']}; the after run "
                 f"recomputed {result['after']['answers_computed']} answers and "
                 f"{result['after']['judgments_computed']} judgments")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="MR,GR,CM,SI")
    parser.add_argument("--limit", type=int, default=3)
    args = parser.parse_args()
    tasks = args.tasks.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        result = measure(Path(tmp), tasks, args.limit)
    sizes = reference_sizes()
    print(table(result, tasks))
    print(f"the reference form alone, over the dataset's {sizes['turns']} judged MR and GR turns (golden reply as the "
          f"answer): reference {sizes['turn']['reference_words']} -> {sizes['dialogue']['reference_words']} words, "
          f"judge user message {sizes['turn']['user_message_words']} -> {sizes['dialogue']['user_message_words']} "
          "words (turn -> dialogue)")
    print(json.dumps({**result, "reference_sizes": sizes}, indent=1, default=str))


if __name__ == "__main__":
    main()
