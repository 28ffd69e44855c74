-- judge_outputs: how each judge answered, per judge, protocol, engine and output format: how many of its
-- verdicts were held to the protocol's format by constrained decoding (`output_format` is the format's label,
-- e.g. 'regex:unieval'; 'free' when the judge wrote free text) and how many could not be parsed. `backend` and
-- `backend_version` are the engine that answered (vLLM / transformers version; an endpoint's served model id and
-- system_fingerprint). Every stored verdict counts, whatever plan it belongs to.
with judged as (
    select * from {{ ref('judgments') }}
),

final as (
    select
        judge,
        protocol,
        coalesce(backend, 'unknown') as backend,
        coalesce(backend_version, 'unknown') as backend_version,
        coalesce(output_format, 'free') as output_format,
        count(*) as verdicts,
        count(*) filter (where not parsed) as unparsed,
        round(count(*) filter (where not parsed) / count(*), 4) as unparsed_rate
    from judged
    group by all
    order by judge, protocol, backend, backend_version, output_format
)

select * from final
