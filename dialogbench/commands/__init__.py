"""The ``dialogbench`` commands, one module per group; ``dialogbench/cli.py`` parses the command line and calls them.

- ``parser``: the command line's grammar (every command, its flags, their help); ``args``: the flags' value types
  and the flags several commands share; ``overrides``: what ``run``/``validate``/``plan`` take from the command line
  (the config's overrides, the demo config when only ``--model`` is given).
- ``run``: ``run`` (build the Run once, hand it to the Prefect pipeline, print what it did); ``run_reuse``: a rerun
  the board's latest run already answers; ``run_failures``: why a run failed, as the terminal says it.
- ``checking``: ``validate`` and ``plan`` (a config checked or sized, nothing computed).
- ``lake_access``: how a command opens the lake (it exists, is of this format, the lease for writers);
  ``querying``: ``query`` and ``export``; ``lake_writes``: ``migrate``, ``catalog``, ``labels import``;
  ``pages``: ``report``, ``explore``, ``serve``.
- ``say``: printing for a terminal (control characters made visible), counted nouns.

Each command imports what it needs inside its function, so parsing the command line (``--help``, ``validate``)
never imports Prefect, vLLM or DuckDB."""
