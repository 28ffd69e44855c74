"""BotChat's known-answer probes (judge_checks/probe_stage.py), built from human MuTual-Test dialogues, so the
right answer is known by construction:

- UniEval: the human dialogue (right: no AI) and its twin with one utterance, at a known index k >= 3 (after the
  seed), replaced by an AI's self-identification (``AI_SELF_IDENTIFICATION``, a line no human in a chat says; right:
  AI found; ``index_right``: found at k);
- Arena and GTEval: the human dialogue against its AI-marked twin, in both orders (right: the human one wins).

The dialogues are the last ``k`` of the dataset with at least 6 utterances (so a limited run rarely evaluates them
too), each cut to at most the protocol's judged length; k is drawn from the dialogue's id, so the probes are the same
every night."""

from __future__ import annotations

from dialogbench.botchat import arena, unieval
from dialogbench.botchat.seeds import read_seeds
from dialogbench.judge_checks.probe_stage import AI_SELF_IDENTIFICATION, Probe, ProbeStage
from dialogbench.keys import fingerprint

MIN_UTTERANCES = 6
PAIRWISE_LENGTH = 8  # utterances of each conversation an Arena / GTEval probe shows (the demo's and paper's N = 8)


def human_dialogues(config, k: int, length: int) -> list[tuple[str, tuple[str, ...], int]]:
    """(seed id, the human dialogue cut to ``length``, the index 3..len of its AI-marked utterance) of the last
    ``k`` dialogues with at least ``MIN_UTTERANCES``."""
    seeds = [r for r in read_seeds(config.botchat.dataset).to_pylist() if r["n_utterances"] >= MIN_UTTERANCES]
    found = []
    for row in seeds[-k:] if k else []:
        dialogue = tuple(row["dialogue"][:length])
        index = 3 + int(fingerprint("probe-index", row["seed_id"])[:8], 16) % (len(dialogue) - 2)
        found.append((row["seed_id"], dialogue, index))
    return found


def marked(dialogue: tuple[str, ...], index: int) -> tuple[str, ...]:
    return tuple(AI_SELF_IDENTIFICATION if i == index else u for i, u in enumerate(dialogue, 1))


def unieval_probes(config, k: int, judge) -> ProbeStage:
    examples = unieval.load_examples(config.botchat.unieval_examples)
    probes = []
    for seed_id, dialogue, index in human_dialogues(config, k, config.botchat.n_max):
        probes += [Probe(f"{seed_id}/human", "human", "human", "no AI", dialogue),
                   Probe(f"{seed_id}/ai@{index}", "ai_marked", "ai_marked", f"AI at {index}", marked(dialogue, index))]

    def grade(probe: Probe, text: str) -> dict:
        verdict = unieval.parse_verdict(text, n_utterances=len(probe.content))
        answer = None if not verdict.parsed else ("No" if verdict.choice == "No" else f"Yes {verdict.index}")
        if probe.kind == "human":
            return {"parsed": verdict.parsed, "answer": answer, "correct": verdict.parsed and verdict.choice == "No"}
        index = int(probe.expected.rsplit(" ", 1)[1])
        return {"parsed": verdict.parsed, "answer": answer, "correct": verdict.parsed and verdict.choice == "Yes",
                "index_right": verdict.parsed and verdict.index == index}

    return ProbeStage(protocol="botchat_unieval", version=unieval.protocol_version(examples), judge=judge,
                      probes=probes, prompt=lambda p: unieval.build_prompt(p.content, examples),
                      output_format=lambda p: unieval.output_format(n_utterances=len(p.content),
                                                                    max_tokens=judge.max_tokens),
                      grade=grade)


def pairwise_probes(config, k: int, judge, kind: arena.Kind) -> ProbeStage:
    probes = []
    for seed_id, dialogue, index in human_dialogues(config, k, PAIRWISE_LENGTH):
        twin = marked(dialogue, index)
        probes += [Probe(f"{seed_id}/ai@{index}/human_first", "human_vs_ai", "human_first", "the human one wins",
                         (dialogue, twin)),
                   Probe(f"{seed_id}/ai@{index}/ai_first", "human_vs_ai", "ai_first", "the human one wins",
                         (twin, dialogue))]

    def grade(probe: Probe, text: str) -> dict:
        verdict = arena.parse_arena_verdict(text)
        human = "model_a" if probe.variant == "human_first" else "model_b"
        return {"parsed": verdict.parsed, "answer": verdict.verdict,
                "correct": verdict.parsed and arena.winner_for(verdict.verdict) == human}

    return ProbeStage(protocol=f"botchat_{kind}", version=arena.protocol_version(kind), judge=judge, probes=probes,
                      prompt=lambda p: arena.build_prompt(*p.content, kind=kind),
                      output_format=lambda p: arena.output_format(max_tokens=judge.max_tokens), grade=grade)


def probes(config, k: int) -> list[ProbeStage]:
    """The probe stages of the BotChat protocols the config runs, ``k`` dialogues each."""
    settings, judge = config.botchat, config.model(config.botchat.judge)
    return [unieval_probes(config, k, judge),
            *([pairwise_probes(config, k, judge, "arena")] if settings.arena.enabled else []),
            *([pairwise_probes(config, k, judge, "gteval")] if settings.gteval.enabled else [])]
