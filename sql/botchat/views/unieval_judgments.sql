-- unieval_judgments: BotChat UniEval verdicts: is there an AI among the first n_judged utterances of a dialogue
-- (choice Yes / No), the first utterance it flagged (ai_index, 1-based) and why, with the shared verdict columns.
select * from {{ source('unieval_judgments') }}
