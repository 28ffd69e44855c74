-- seeds: the BotChat ChatSEEDs (MuTual-Test): seed id, the 2-utterance seed, the human dialogue and its length.
select * from {{ source('seeds') }}
