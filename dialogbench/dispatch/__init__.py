"""A run's model work spread out: the units a config makes and how a late attempt cannot double a cell (``units``),
the processes of this box that run them on GPUs of the run's own (``box``), and which GPUs each local engine gets
(``placement``). Prefect's side of sending and waiting is ``tasks/dispatch.py``. Callers import from the module."""
