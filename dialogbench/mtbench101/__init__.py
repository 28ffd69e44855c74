"""MT-Bench-101 (Bai et al., ACL 2024): fine-grained multi-turn dialogue evaluation, without orchestration.

``taxonomy`` (tier → ability → 13 tasks), ``dataset`` (golden-context turn items), ``prompts`` (the
per-task judge prompts of appendix C), ``rating`` (``Rating: [[n]]`` parsing) and ``scoring``
(minimum over judged turns, task/ability/tier/overall means as Table 3).
"""
