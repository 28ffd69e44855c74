-- judgments: every judge verdict of every protocol (one row per judged cell), the columns all verdicts share:
-- protocol, item, judged model and output, judge, raw output, parsed, tokens, provenance. Each protocol's own
-- columns are in its table's view (unieval_judgments, arena_judgments, gteval_judgments, mtbench101_judgments);
-- verdicts() is the union of every registered verdict table, so a new family's judge shows up here too.
select * from {{ verdicts() }}
