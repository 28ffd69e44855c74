-- mtbench101_judgments: the judge's 1–10 rating (score, null when unparsed) of one MT-Bench-101 answer
-- (generation_key: its mtbench101_answers cell); item_id is '<dialogue id>:<0-based turn>'.
select * from {{ source('mtbench101_judgments') }}
