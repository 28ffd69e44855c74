"""Judge checks: can the run's judges do the job? Every run, per (judge, protocol) of its board: the share of verdicts
that cannot be read (``unparsed``) and how often the judge gives the same answer (``discrimination``); a value whose
judge fails a check is not measured (the leaderboards, the report, the history say so) and the run can fail."""
