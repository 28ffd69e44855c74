-- gteval_judgments: BotChat GTEval verdicts, a model's dialogue against the human one (opponent 'human'), in
-- both orders: position is where the model's conversation was shown; winner is model_a (shown first) / model_b
-- / tie, null when unparsed.
select * from {{ source('gteval_judgments') }}
