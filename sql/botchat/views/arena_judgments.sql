-- arena_judgments: BotChat Arena verdicts, one per comparison and order: `model` was shown first (position 1),
-- `opponent` second, each cut to n_judged utterances; verdict names the AI-involved conversation(s), winner is
-- model_a (shown first) / model_b / tie, null when unparsed.
select * from {{ source('arena_judgments') }}
