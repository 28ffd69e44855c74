-- A stored dialogue has exactly the utterances it was generated to (seed included).
select cell_key, n_target, len(utterances) as utterances from {{ ref('generations') }} where len(utterances) <> n_target
