-- judge_agreement_items: every current judged cell of the board (current_cells of a judge stage, with its answer
-- from answers()), named by an item identity that leaves the judge out, so two judges' cells of the same item meet
-- (judge_pairs) and a human label can name it (dialogbench/judge_checks/labels.py). One row per (protocol, item,
-- judge). `item` is what a human-labels file's `item` column holds:
--   botchat_unieval   '<seed>:<model>@<n judged>'             e.g. 'MT-12:bot-a@8'
--   botchat_arena     '<seed>:<first> vs <second>@<n>'        the order shown: Conversation 1 is <first>
--   botchat_gteval    '<seed>:<model> vs human@<L>' / '<seed>:human vs <model>@<L>'   the order shown
--   mtbench101_judge  '<dialogue>:<turn>:<model>'             the item_id (dialogue id, 0-based turn), the model
--   another protocol  '<item_id>:<its models, in role order, joined by ' vs '>'
-- output_key: the judged output(s) (generation keys): two judges' cells pair only when they judged the same
-- dialogue / answer. cluster: what a bootstrap resamples whole (the seed; MT-Bench-101's dialogue). category: the
-- answer agreement compares (null when unparsed): UniEval Yes / No; Arena the outcome of `side` (the alphabetically
-- first model) win / lose / tie (both or neither AI-involved: tie); GTEval the model's outcome win / lose / tie;
-- MT-Bench-101 the rating '1'..'10' (also in `score`). side / other: the model(s) the category is about (other: the
-- Arena opponent, else null). `href` is left to the explorer (dialogbench/explorer/disagreements.py).
with cells as (
    select * from {{ ref('current_cells') }}
    where judge is not null
),

answers as (
    select * from {{ answers() }}
),

judged as (
    select cell_key, generation_key from {{ ref('judgments') }}
),

details as (  -- the protocol's own columns that tell cells apart besides the judge: the length judged, the order
    select cell_key, n_judged, null::integer as position, null::varchar as opponent_generation_key
    from {{ ref('unieval_judgments') }}
    union all
    select cell_key, n_judged, position, opponent_generation_key from {{ ref('arena_judgments') }}
    union all
    select cell_key, n_judged, position, opponent_generation_key from {{ ref('gteval_judgments') }}
),

answered as (
    select
        cells.stage as protocol,
        cells.item_id,
        cells.judge,
        cells.cell_key,
        cells.roles,
        cells.scope,
        answers.parsed,
        answers.answer,
        answers.score,
        details.n_judged::integer as n,
        details.position,
        concat_ws('+', judged.generation_key, details.opponent_generation_key) as output_key
    from cells
    join answers on answers.cell_key = cells.cell_key and answers.protocol = cells.stage
    left join judged on judged.cell_key = cells.cell_key
    left join details on details.cell_key = cells.cell_key
),

named as (
    select
        *,
        case protocol
            when 'botchat_unieval' then item_id || ':' || roles['model'] || '@' || n
            when 'botchat_arena' then item_id || ':' || roles['first'] || ' vs ' || roles['second'] || '@' || n
            when 'botchat_gteval' then item_id || ':'
                || case when position = 2 then 'human vs ' || roles['model'] else roles['model'] || ' vs human' end
                || '@' || n
            when 'mtbench101_judge' then item_id || ':' || roles['model']
            else item_id || ':' || array_to_string(map_values(roles), ' vs ')
        end as item,
        case when protocol = 'mtbench101_judge' then split_part(item_id, ':', 1) else item_id end as cluster,
        case protocol
            when 'botchat_arena' then least(roles['first'], roles['second'])
            when 'botchat_gteval' then roles['model']
            else coalesce(roles['model'], scope[1])
        end as side,
        case when protocol = 'botchat_arena' then greatest(roles['first'], roles['second']) end as other,
        case protocol
            when 'botchat_arena' then roles['first']
            when 'botchat_gteval' then case when position = 2 then 'human' else roles['model'] end
        end as shown_first
    from answered
),

final as (
    select
        protocol,
        item,
        judge,
        cluster,
        item_id,
        side,
        other,
        shown_first,
        n,
        output_key,
        cell_key,
        parsed,
        answer,
        score,
        case
            when not parsed or answer is null then null
            when protocol = 'botchat_unieval' then split_part(answer, ' ', 1)
            when protocol in ('botchat_arena', 'botchat_gteval') then
                case
                    when answer in ('both', 'neither') then 'tie'
                    -- the conversation judged AI-involved loses: is it `side`'s?
                    when (answer = 'conversation_1') = (shown_first = side) then 'lose'
                    else 'win'
                end
            when score is not null then cast(score::integer as varchar)
            else answer
        end as category
    from named
)

select * from final
