"""Self-judging: a candidate rated by a judge that is the candidate itself (self-enhancement bias, as in the MT-Bench
paper: an LLM judge tends to favour its own answers). Not an error, a caveat: ``dialogbench validate`` and the run's
preflight say it (``notes``), and every leaderboard marks the model: a ``self_judged`` column in the Prefect
leaderboard artifacts and in results.json / ``dialogbench export`` (``report.results``), and a ``MARK`` after the name
with the ``LEGEND`` beside it in the CLI's tables (the families' and the Arena and GTEval tables ``dialogbench run``
prints) and in the report's family sections, "Who is really ahead" and "Trends" (``report.ahead``, ``report.trends``:
per matrix or chart, by its judge).

Which candidates are the judge (``same_model``): the same name, or the same model under another name. A model is
identified by its ``weights`` and ``revision`` (``identity``), not by ``keys.model_fingerprint``: that fingerprint
also holds the name, the backend, the sampling, the chat template and the token limits, which change the outputs but
not whose outputs they are. The same weights served by vLLM, loaded by transformers or behind an OpenAI-compatible
endpoint (whose ``weights`` is the served model's name), sampled at another temperature, is still the judge rating
itself (``configs/demo.yaml``: the 135M model plays both chatbots and the judge). A model without ``weights`` (the
scripted test backend) is identified by its name alone. ``revision`` must be equal (unset matches only unset: a
pinned commit and the branch's latest may differ); ``weights`` are compared as written, less surrounding space and a
trailing ``/``, so two spellings of one path are not recognised (a missed note, never a false one).

The families judged here are BotChat (UniEval, Arena and GTEval, all by ``botchat.judge``) and MT-Bench-101 (by
``mtbench101.judge``, else BotChat's); GameEval has no judge."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dialogbench.run.config import Config, ModelConfig

MARK = "†"
LEGEND = f"{MARK} judged by itself (self-enhancement bias: a judge tends to rate its own output higher)"
BIAS = "self-enhancement bias: an LLM judge tends to rate its own output higher"
WHY = f"{BIAS}, so its numbers are not comparable with the other candidates'; use another judge to rank it"

Identity = tuple[str, ...]


@dataclass(frozen=True)
class Judged:
    """A judged family of the config: its name, what its judge judges and the field naming the judge (for the notes),
    the judge, the candidates and its agreement judges' names (``<family>.agreement_judges``)."""

    family: str
    protocol: str
    field: str
    judge: "ModelConfig"
    candidates: tuple["ModelConfig", ...]
    agreement_judges: tuple[str, ...] = ()


def _weights_key(weights: Any, revision: Any) -> Identity | None:
    text = str(weights).strip().rstrip("/") if weights else ""
    return ("weights", text, "" if revision is None else str(revision)) if text else None


def identity(model: "ModelConfig") -> Identity:
    """What makes two model configs the same model whatever they are called: weights and revision, or the name for a
    model without weights (see the module's docstring)."""
    return _weights_key(model.weights, model.revision) or ("name", model.name)


def identities(config: "Config") -> dict[str, Identity]:
    """Every model and judge of ``config`` by name, to its ``identity``."""
    return {m.name: identity(m) for m in [*config.models, *config.judges]}


def identities_from_yaml(text: str | None) -> dict[str, Identity]:
    """The identities of the models and judges of a recorded effective config (``run_configs.config``, YAML: what the
    report has of a run's config), by name; none when the text is absent or unreadable (names alone then decide)."""
    if not text:
        return {}
    from dialogbench.text.yamlbounds import load_yaml_text

    try:
        raw = load_yaml_text(text, "run_configs.config") or {}
        entries = [*(raw.get("models") or []), *(raw.get("judges") or [])]
        return {str(e["name"]): _weights_key(e.get("weights"), e.get("revision")) or ("name", str(e["name"]))
                for e in entries if isinstance(e, dict) and e.get("name")}
    except (ValueError, AttributeError, TypeError):
        return {}


def same_model(model: str, judge: str | None, known: Mapping[str, Identity] | None = None) -> bool:
    """Whether the candidate ``model`` is the ``judge`` (names; ``known``: identities by name, as ``identities``
    gives them; a name not in it is only itself)."""
    if not judge:
        return False
    if model == judge:
        return True
    known = known or {}
    mine, theirs = known.get(model), known.get(judge)
    return mine is not None and mine == theirs


def judged(config: "Config") -> list[Judged]:
    """The enabled judged families of ``config`` with their judge and candidates."""
    found = []
    if config.enabled("botchat") and config.botchat.judge:
        from dialogbench.botchat.config import chatbots

        found.append(Judged("botchat", "BotChat (UniEval, Arena, GTEval)", "botchat.judge",
                            config.model(config.botchat.judge), tuple(chatbots(config)),
                            tuple(config.botchat.agreement_judges)))
    if config.enabled("mtbench101"):
        from dialogbench.mtbench101.config import answerers, judge

        field = "mtbench101.judge" if config.mtbench101.judge else "botchat.judge"
        found.append(Judged("mtbench101", "MT-Bench-101", field, judge(config), tuple(answerers(config)),
                            tuple(config.mtbench101.agreement_judges)))
    return found


def self_judged(config: "Config") -> dict[str, set[str]]:
    """For each enabled judged family (``botchat``, ``mtbench101``): the names of its candidates that are its judge
    (``same_model``); an empty set when none is."""
    known = identities(config)
    return {j.family: {m.name for m in j.candidates if same_model(m.name, j.judge.name, known)} for j in judged(config)}


def notes(config: "Config", *, source: str = "config") -> list[str]:
    """One note per self-judged candidate: the model, the family and its judge, and why it matters."""
    known, out = identities(config), []
    for j in judged(config):
        for model in j.candidates:
            if same_model(model.name, j.judge.name, known):
                how = ("is the judge" if model.name == j.judge.name  # the weights are not quoted: a URL's password
                       else f"has the weights and revision of the judge {j.judge.name!r}")
                out.append(f"{source}: model {model.name!r}: self-judging: it {how} of {j.protocol} "
                           f"({j.field}), which rates its own output there; {WHY}. Its rows are marked "
                           f"{MARK} in the leaderboards and the report")
    out += [f"{source}: model {model.name!r}: self-judging: it is an agreement judge of {j.protocol} "
            f"({j.family}.agreement_judges) that rates its own output there; its agreement with the judge is in part "
            f"agreement about itself (the headline numbers are the judge's alone)" for j in judged(config)
            for model in j.candidates if any(same_model(model.name, a, known) for a in j.agreement_judges)]
    return out


def mark_rows(rows: Iterable[dict], *, judge: str | None = None,
              known: Mapping[str, Identity] | None = None) -> list[dict]:
    """``rows`` (leaderboard rows: a ``model`` and, where present, the ``judge`` that rated it, else ``judge``), each
    with ``self_judged``: whether the model is that judge (``same_model``)."""
    return [{**row, "self_judged": same_model(row["model"], row.get("judge") or judge, known)} for row in rows]


def marked(name: str, on: bool) -> str:
    """A model's name as a table shows it: followed by ``MARK`` when it is judged by itself."""
    return f"{name} {MARK}" if on else name


def legend(rows: Iterable[dict]) -> str:
    """The line a printed table ends with when a row of it is ``self_judged`` ("\\n" + ``LEGEND``), else ''."""
    return f"\n{LEGEND}" if any(r.get("self_judged") for r in rows) else ""


def warning(models: Iterable[str], judge: str | None) -> list[str]:
    """A report section's warning naming its self-judged ``models`` (none: no warning)."""
    models = sorted(set(models))
    if not models:
        return []
    names = ", ".join(models)
    verb = "is" if len(models) == 1 else "are"
    return [f"Self-judging: {names} {verb} rated by the judge {judge}, the same model (the same name, or the same "
            f"weights and revision), marked {MARK} in this section's tables. {BIAS[0].upper()}{BIAS[1:]}, so these "
            "numbers are not comparable with the other models'."]
