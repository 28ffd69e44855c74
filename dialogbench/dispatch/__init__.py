"""A run's model work spread out: the units a config makes and how a late attempt cannot double a cell (``units``),
the processes of this box that run them on GPUs of the run's own (``box``), which GPUs each local engine gets
(``placement``), and the loop that sends the units and watches them to their end (``scheduler``). Prefect's side of
sending and waiting (a work pool's flow runs) is ``tasks/dispatch.py``. Callers import from the module."""
