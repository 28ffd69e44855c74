-- Pass rates are rates, and counts add up.
select * from {{ ref('botchat_unieval') }}
where pass_rate < 0 or pass_rate > 1 or passed > parseable or parseable + unparsed <> dialogues
