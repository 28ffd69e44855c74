"""Addresses of the explorer filtered to the items behind a headline metric's number: ``metric_href`` writes the
``#`` part of one metric's slice (the report's "Who is really ahead" cells and its model labels), with
``hrefs.explorer_href`` (kept apart so the families' report sections link their numbers without importing this
module, which reads the families' metrics it is handed: ``_metric_role``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dialogbench.explorer.hrefs import explorer_href
from dialogbench.run.family_spec import Family, family_named

# The explorer's protocol of each leaderboard view's numbers (the records a family's ``explorer`` gives the page:
# dialogbench/<family>/explorer.py), for the metrics the report compares (``Family.metrics``).
PROTOCOLS = {
    ("botchat", "botchat_unieval"): "botchat_unieval",
    ("botchat", "botchat_gteval"): "botchat_gteval",
    ("botchat", "botchat_elo"): "botchat_arena",
    ("botchat", "botchat_pair_rates"): "botchat_arena",
    ("mtbench101", "mtbench101_leaderboard"): "mtbench101",
    ("mtbench101", "mtbench101_tasks"): "mtbench101",
    ("gameeval", "gameeval_askguess"): "gameeval_askguess",
    ("gameeval", "gameeval_spyfall"): "gameeval_spyfall",
    ("gameeval", "gameeval_tofukingdom"): "gameeval_tofukingdom",
}
# The protocols with a verdict per N (the Arena judges each pair again at each N): a slice's n= selects them. UniEval
# judges a dialogue once (pass@N reads where it found the first AI utterance), so every N has the same records.
PER_N = frozenset({"botchat_arena"})
# A metric's model column ``<role>_model`` (SpyFall's spy_model): the model plays that role in the game.
ROLE_SUFFIX = "_model"


def slice_parts(slice_: str | None) -> dict[str, str]:
    """A metric slice's ``key=value`` parts (``judge=j, n=16`` -> {"judge": "j", "n": "16"}); the values are judges,
    N, task codes, settings, model names and camps, none of which holds ", "."""
    parts = {}
    for part in (slice_ or "").split(", "):
        name, eq, value = part.partition("=")
        if eq:
            parts[name] = value
    return parts


def metric_href(family: str, leaderboard: str, metric: str, slice_: str | None, models: Iterable[str], *,
                families: Sequence[Family]) -> str | None:
    """The explorer showing the records behind ``metric``'s numbers of ``models`` in ``slice_`` (the
    ``metric_history`` / ``pairwise`` slice: ``judge=j, n=16``, ``judge=j, task=CM``, ``villager_model=B``,
    ``camp=prince``, ``setting=with_description``; a slice left out selects every slice, e.g. every task). None
    where the explorer has no records for the leaderboard, or the slice names a key it cannot filter on (a link to
    more than the number's items would mislead). ``families``: the run's, whose metrics name their model's role."""
    protocol = PROTOCOLS.get((family, leaderboard))
    if protocol is None:
        return None
    role = _metric_role(family, leaderboard, metric, families=families)
    judge, n, keys, seats = None, None, [], []
    for name, value in slice_parts(slice_).items():
        if name == "judge":
            judge = value
        elif name == "n":
            n = value if protocol in PER_N else None
        elif name in ("task", "setting"):  # an exact word of the records' keys (MT-Bench-101, Ask-Guess)
            keys.append(value)
        elif name == "camp" and role is None:  # TofuKingdom: the model plays every role of the camp
            role = value
        elif name.endswith(ROLE_SUFFIX):  # SpyFall's villager_model=B: B in the villagers' seats
            seats.append((name.removesuffix(ROLE_SUFFIX), value))
        else:
            return None
    return explorer_href(protocol=protocol, models=models, judge=judge, role=role, seats=seats, keys=keys, n=n)


def _metric_role(family: str, leaderboard: str, metric: str, *, families: Sequence[Family]) -> str | None:
    """The role a metric's model plays (its model column ``spy_model``: the spy), None for a plain ``model``."""
    try:
        found = family_named(families, family)
    except KeyError:
        return None
    for m in found.metrics:
        if m.view == leaderboard and m.name == metric and m.model.endswith(ROLE_SUFFIX):
            return m.model.removesuffix(ROLE_SUFFIX)
    return None
