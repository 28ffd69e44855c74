-- utterance_lengths: CL100K tokens of every generated utterance (seed utterances excluded).
select * from {{ source('utterance_lengths') }}
