-- judge_findings: each run's judge-check findings as its snapshot recorded them (dialogbench/judge_checks/health.py):
-- one row per (judge, protocol) whose numbers the run refused, with the check that failed and the report's sentence.
select * from {{ source('judge_findings') }}
