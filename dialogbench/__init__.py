"""dialogbench: multi-turn dialogue benchmarks (BotChat, MT-Bench-101, GameEval) as cached cells.

The package is orchestration-free: Prefect lives in ``flows/`` and ``tasks/`` only.
"""

__version__ = "0.1.0"
