"""Schemas of the lake tables (also used to give empty tables typed views)."""

import pyarrow as pa

TS = pa.timestamp("us", tz="UTC")

GENERATIONS = pa.schema([
    ("cell_key", pa.string()),         # dialogue_key + n_target
    ("dialogue_key", pa.string()),     # item + model config + protocol version (length-independent)
    ("protocol", pa.string()),
    ("item_id", pa.string()),
    ("model", pa.string()),
    ("model_fp", pa.string()),
    ("n_target", pa.int32()),
    ("utterances", pa.list_(pa.string())),  # the whole dialogue, seed included
    ("completion_tokens", pa.list_(pa.int32())),  # model tokens of each generated utterance
    ("empty_utterances", pa.int32()),
    ("trimmed_steps", pa.int32()),
    ("run_id", pa.string()),
    ("created_at", TS),
    # Provenance: the config's backend and the engine's version (vLLM / transformers version; an
    # endpoint's served model id and system_fingerprint). Null in files written before they existed.
    ("backend", pa.string()),
    ("backend_version", pa.string()),
])

JUDGMENTS = pa.schema([
    ("cell_key", pa.string()),
    ("protocol", pa.string()),
    ("protocol_version", pa.string()),
    ("item_id", pa.string()),
    ("model", pa.string()),
    ("judge", pa.string()),
    ("judge_fp", pa.string()),
    ("generation_key", pa.string()),
    ("n_judged", pa.int32()),
    ("raw_output", pa.string()),
    ("parsed", pa.bool_()),
    ("parse_error", pa.string()),
    ("choice", pa.string()),
    ("ai_index", pa.int32()),
    ("reason", pa.string()),
    ("prompt_tokens", pa.int32()),
    ("completion_tokens", pa.int32()),
    ("run_id", pa.string()),
    ("created_at", TS),
    # Pairwise protocols (botchat_arena, botchat_gteval); null for UniEval rows and in older files.
    # `model` / `generation_key` are one side, `opponent` / `opponent_generation_key` the other (the
    # second model, or "human" with a null key in GTEval). `position` is where `model`'s conversation
    # was shown: 1 = "Conversation 1", 2 = "Conversation 2" (Arena rows always store the first-shown
    # model as `model`, so 1). `verdict`: the conversation(s) the judge found AI involved
    # (conversation_1 / conversation_2 / both / neither). `winner`: the side shown FIRST is "model_a",
    # the second "model_b"; the side NOT judged AI wins, both / neither is "tie"; null when unparsed.
    ("opponent", pa.string()),
    ("opponent_generation_key", pa.string()),
    ("position", pa.int32()),
    ("verdict", pa.string()),
    ("winner", pa.string()),
    # MT-Bench-101 (protocol "mtbench101"): the judge's 1–10 rating of one turn, null when unparsed
    # and for every other protocol (older files lack the column; reads use union_by_name).
    ("score", pa.int32()),
    # Provenance: the config's backend and the engine's version (vLLM / transformers version; an
    # endpoint's served model id and system_fingerprint). Null in files written before they existed.
    ("backend", pa.string()),
    ("backend_version", pa.string()),
    # The output format the judge was held to by constrained decoding ("regex:unieval"), null when its
    # text was free (structured_outputs off, or a format its backend does not enforce).
    ("output_format", pa.string()),
])

FAILURES = pa.schema([
    ("cell_key", pa.string()),
    ("stage", pa.string()),
    ("item_id", pa.string()),
    ("model", pa.string()),
    ("judge", pa.string()),
    ("error", pa.string()),
    ("run_id", pa.string()),
    ("created_at", TS),
])

PLANS = pa.schema([  # the cells a run asked for: metrics read each model's most recent plan
    ("run_id", pa.string()),
    ("stage", pa.string()),
    ("cell_key", pa.string()),
    ("item_id", pa.string()),
    ("model", pa.string()),
    ("judge", pa.string()),
    ("created_at", TS),
    ("task", pa.string()),  # MT-Bench-101 task code of the item; null for other stages (and older files)
])

MTBENCH101_ANSWERS = pa.schema([  # one model answer to one MT-Bench-101 turn, given its context
    ("cell_key", pa.string()),       # protocol + answer version + item content + model config + context mode
    ("dialogue_id", pa.string()),
    ("task", pa.string()),
    ("turn", pa.int32()),            # 0-based, as in the dataset
    ("context", pa.string()),        # "golden" (the dataset's earlier turns) or "self" (the model's own answers)
    ("model", pa.string()),
    ("model_fp", pa.string()),
    ("answer", pa.string()),
    ("prompt_tokens", pa.int32()),
    ("completion_tokens", pa.int32()),
    ("run_id", pa.string()),
    ("created_at", TS),
    # Provenance: the config's backend and the engine's version (vLLM / transformers version; an
    # endpoint's served model id and system_fingerprint). Null in files written before they existed.
    ("backend", pa.string()),
    ("backend_version", pa.string()),
])

ELO = pa.schema([  # arena ratings per run, (judge, N) and model: bootstrap Elo and Bradley–Terry
    ("run_id", pa.string()),
    ("judge", pa.string()),
    ("n", pa.int32()),
    ("model", pa.string()),
    ("elo", pa.float64()),       # mean over repeats of the bootstrap median (paper, appendix A)
    ("elo_std", pa.float64()),   # std of those medians across repeats
    ("ci_low", pa.float64()),    # 2.5th percentile of the pooled bootstrap rounds
    ("ci_high", pa.float64()),   # 97.5th percentile
    ("bt", pa.float64()),        # Bradley–Terry on the Elo scale (mean 1000)
    ("bt_ci_low", pa.float64()),
    ("bt_ci_high", pa.float64()),
    ("games", pa.int64()),
    ("settings", pa.string()),
    ("created_at", TS),
])

LENGTHS = pa.schema([  # CL100K tokens of each generated utterance (the seed's two are not counted)
    ("generation_key", pa.string()),
    ("model", pa.string()),
    ("model_fp", pa.string()),
    ("item_id", pa.string()),
    ("utterance", pa.int32()),   # 1-based position in the dialogue
    ("tokens", pa.int32()),
    ("created_at", TS),
])

RUNS = pa.schema([
    ("run_id", pa.string()),
    ("stage", pa.string()),
    ("planned", pa.int64()),
    ("cached", pa.int64()),
    ("computed", pa.int64()),
    ("failed", pa.int64()),
    ("seconds", pa.float64()),
    ("started_at", TS),
    ("finished_at", TS),
    ("config", pa.string()),
    ("detail", pa.string()),
])

GAMEEVAL_EVENT = pa.struct([  # one entry of a game's transcript: a host announcement or a player's move
    ("step", pa.int32()),        # host step (0-based): every pending move of every game is one batch per model
    ("round", pa.int32()),       # Ask-Guess Q&A round / SpyFall round / TofuKingdom question number (0 = setup)
    ("speaker", pa.string()),    # "host", "questioner", "answerer", "player3", "prince", …
    ("role", pa.string()),       # the speaker's secret role: spy / villager / Princess / Queen …; "host"
    ("model", pa.string()),      # the model that spoke; null for the host
    ("kind", pa.string()),       # announce / describe / ask / answer / vote / question / choose
    ("text", pa.string()),       # what the other players heard (null: nothing public)
    ("thought", pa.string()),    # the player's private chain of thought (in no other player's history)
    ("target", pa.string()),     # the player named: a vote, TofuKingdom's question target, the final choice
    ("raw", pa.string()),        # the model's raw output
    ("valid", pa.bool_()),       # false: unparseable or against the rules (a counted chat error; fallback applied)
    ("error", pa.string()),      # why not valid, or the backend error
])

GAMEEVAL_GAMES = pa.schema([  # one finished (or abandoned) game: a GameEval cell
    ("cell_key", pa.string()),       # protocol + game version + game/setting/item/trial/seed + role→model configs + limits
    ("game", pa.string()),           # askguess / spyfall / tofukingdom
    ("game_version", pa.string()),
    ("item_id", pa.string()),        # readable id, unique within (game, assignment): "apple/with_description/3"
    ("item", pa.string()),           # Ask-Guess word; SpyFall "spy_word,common_word"; TofuKingdom ""
    ("setting", pa.string()),        # Ask-Guess with_description / without_description; else "default"
    ("trial", pa.int32()),
    ("seed", pa.int64()),            # the trial's seed: every move's sampling seed derives from it
    ("assignment", pa.map_(pa.string(), pa.string())),  # Ask-Guess {questioner, answerer}; SpyFall {spy, villager};
                                                         # TofuKingdom camps {prince, queen, spy} → model name
    ("outcome", pa.string()),        # Ask-Guess ST/EE/RLE/AME/CE; SpyFall spy/villagers; TofuKingdom winning camp
                                     # prince/queen/spy; null when the game did not finish by the rules
    ("end_reason", pa.string()),     # see dialogbench/gameeval/README.md (backend_error rows are replayed next run)
    ("finished", pa.bool_()),        # ended by the game's rules (the paper's "successful trial")
    ("rounds", pa.int32()),
    ("spy_living_rounds", pa.int32()),  # SpyFall: rounds the spy took part in; null for the other games
    ("chat_errors", pa.int32()),     # moves that were unparseable, broke a rule or failed in the backend
    ("steps", pa.int32()),           # host steps the game took
    ("prompt_tokens", pa.int64()),
    ("completion_tokens", pa.int64()),
    ("transcript", pa.list_(GAMEEVAL_EVENT)),
    ("run_id", pa.string()),
    ("created_at", TS),
    # Provenance: the config's backend and the engine's version (distinct values of the players joined with "; "; vLLM / transformers version; an
    # endpoint's served model id and system_fingerprint). Null in files written before they existed.
    ("backend", pa.string()),
    ("backend_version", pa.string()),
    ("constrained_moves", pa.int32()),  # moves held to their JSON format by constrained decoding
])

TABLES = {"generations": GENERATIONS, "judgments": JUDGMENTS, "failures": FAILURES, "plans": PLANS, "runs": RUNS,
          "elo": ELO, "utterance_lengths": LENGTHS, "mtbench101_answers": MTBENCH101_ANSWERS,
          "gameeval_games": GAMEEVAL_GAMES}
