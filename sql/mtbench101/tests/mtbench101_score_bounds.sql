-- An MT-Bench-101 judgment has a score in 1..10 exactly when its rating parsed.
select cell_key, parsed, score from {{ ref('mtbench101_judgments') }}
where ((parsed and (score is null or score not between 1 and 10)) or (not parsed and score is not null))
