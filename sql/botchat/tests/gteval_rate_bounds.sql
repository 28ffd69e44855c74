-- GTEval and Arena pair rates are rates, and their counts add up.
select 'botchat_gteval' as view, model as what from {{ ref('botchat_gteval') }}
where win_tie_rate < 0 or win_tie_rate > 1 or win_tie_rate_parsed < 0 or win_tie_rate_parsed > 1
   or win + tie + lose + unparsed <> comparisons
union all
select 'botchat_pair_rates', model_a || ' vs ' || model_b from {{ ref('botchat_pair_rates') }}
where win_rate_a < 0 or win_rate_a > 1 or tie_rate < 0 or tie_rate > 1 or wins_a + wins_b + ties <> games
