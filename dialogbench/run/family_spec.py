"""What a protocol family gives the pipeline: its config section, stages, tables, results, report section."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import pyarrow as pa

from dialogbench.cells import Stage, Table
from dialogbench.lake.legacy import Legacy

if TYPE_CHECKING:
    from dialogbench.run.config import Config
    from dialogbench.explorer.records import Part, Source
    from dialogbench.history import Metric
    from dialogbench.report.section import ReportSection


@dataclass(frozen=True)
class Family:
    """``name`` is the config section (``config.<name>``, validated by ``section``) and the CLI's name
    for the family. ``stages(config)`` lists its stages in run order (a family ``over_others``, a check on the other
    families' judges, is called ``stages(config, others)`` with the other enabled families: ``stages_of``); ``tables``
    the lake tables it writes; ``sql`` its SQL folder (views, metrics, report, data tests: ``sql/<name>/``);
    ``references`` small tables the SQL reads (generated, e.g. the MT-Bench-101 taxonomy);
    ``leaderboard(config)`` the rows a run returns and ``format_leaderboard(config, rows)`` the CLI's table;
    ``report`` its part of the HTML / Markdown report (none: the report leaves the family out);
    ``check_data(config)`` reads the data files the family's enabled parts will read and returns every problem
    ("<section>.<field>: <file>:<line>: …"), so ``dialogbench validate`` and ``run`` refuse a bad file before
    Prefect starts instead of a stage failing mid-run (dialogbench/run/preflight.py asks every enabled family).
    ``metrics`` are the leaderboard columns each run snapshots for the night-over-night ``changes`` view, and
    ``prompts(config)`` what the family's prompts are (anything JSON-able: texts, versions), whose fingerprint
    names a prompt change as a cause there. ``checks(config, lake, run_id)`` returns what fails the run besides its
    failed cells (one line each; the judge canary's drift), read once the family's stages are done.
    ``explorer(source)`` returns the family's records for the dialogue explorer (dialogbench/explorer/records.py:
    one record format for every family; none: the explorer leaves the family out). ``legacy`` names what the family
    stored under other names in older lake formats (its verdict tables, renamed stages, packed plan models), which
    the lake's migration reads from its layout (``lake.legacy``) rather than knowing the family. ``notes(config)``
    says what is worth fixing without stopping the run (``dialogbench validate`` and preflight print each)."""

    name: str
    title: str
    section: type
    stages: Callable[..., list[Stage]]
    tables: tuple[Table, ...] = ()
    references: dict[str, Callable[[], pa.Table]] = field(default_factory=dict)
    leaderboard: Callable[["Config"], Any] | None = None
    format_leaderboard: Callable[["Config", Any], str] | None = None
    report: "ReportSection | None" = None
    check_data: Callable[["Config"], list[str]] | None = None
    metrics: tuple["Metric", ...] = ()
    prompts: Callable[["Config"], Any] | None = None
    checks: Callable[["Config", Any, str], list[str]] | None = None
    runs_last: bool = False  # after every other family (the canary, which repeats their judgments)
    explorer: Callable[["Source"], "Part"] | None = None
    protocol: bool = True    # a benchmark protocol, named in the report's title (the canary is a check on them)
    always: bool = False     # on in every config: its section has its defaults when absent (`enabled: false` to stop)
    # its judges' known-answer probes: (config, items per protocol) -> probe stages (judge_checks/probe_stage.py)
    probes: Callable[["Config", int], list[Stage]] | None = None
    sql: str | None = None  # its SQL folder (views, metrics, report, tests): a name under sql/, or a path
    over_others: bool = False  # its stages are built from the other families' (the judge canary, the judge checks)
    legacy: Legacy = field(default_factory=Legacy)
    # what is worth saying about the config before a run, not stopping it (``validate`` and preflight print them)
    notes: Callable[["Config"], list[str]] | None = None

    def settings(self, config: "Config"):
        """The family's config section, or None when the config has none."""
        return config.section(self.name)

    def enabled(self, config: "Config") -> bool:
        settings = self.settings(config)
        return settings is not None and settings.enabled

    def stages_of(self, config: "Config", families: Sequence["Family"]) -> list[Stage]:
        """Its stages for ``config``; one ``over_others`` is given the other enabled families that are not."""
        if not self.over_others:
            return self.stages(config)
        return self.stages(config, [f for f in families if f.enabled(config) and not f.over_others])


def family_named(families: Sequence[Family], name: str) -> Family:
    """The family called ``name`` of those a run was built with (what the registry's ``family`` answers of the
    registered ones); KeyError naming the known ones."""
    for found in families:
        if found.name == name:
            return found
    raise KeyError(f"no family {name!r} (registered: {', '.join(f.name for f in families)})")
