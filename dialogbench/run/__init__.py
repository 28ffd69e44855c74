"""What a run is and how it goes, apart from Prefect: its config (``config``) and the families it runs (``registry``,
each one's ``Family`` in ``family_spec``), the board it publishes to (``boards``), its bookkeeping (``runs``), whether
its board's latest run already answers it (``reuse``), what it would compute (``sizing``), the checks before any
compute (``preflight``), a model named on the command line (``model_spec``), what produced it (``environment``), its
engines released as stages end (``pool``), its stop on a signal (``stopping``), its progress on the terminal
(``progress_display``) and its results sent to an experiment tracker (``tracking``). Callers import from the module."""
