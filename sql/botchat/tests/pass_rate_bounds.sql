-- Pass rates are rates, and counts add up (passed counts unparsed verdicts that pass by the authors' rule).
select * from {{ ref('botchat_unieval') }}
where pass_rate < 0 or pass_rate > 1 or pass_rate_parsed < 0 or pass_rate_parsed > 1
   or unparsed_passed > unparsed or passed - unparsed_passed > parseable or parseable + unparsed <> dialogues
