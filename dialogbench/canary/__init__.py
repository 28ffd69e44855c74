"""The judge canary: a small fixed set of judgments judged again every night, outside the cache, and compared
with the first night's verdicts (judge drift)."""
