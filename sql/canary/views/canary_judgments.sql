-- canary_judgments: every judgment the judge canary repeated, one row per run (see dialogbench/canary): tonight's
-- answer and the first night's (baseline, from the verdict tables), whether they agree, both raw outputs.
select * from {{ source('canary_judgments') }}
