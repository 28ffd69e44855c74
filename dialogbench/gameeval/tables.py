"""GameEval's lake table: one row per game played (a game abandoned on backend errors is not a computed cell)."""

import pyarrow as pa

from dialogbench.cells import Table
from dialogbench.lake.schemas import WRITTEN

GAMEEVAL_EVENT = pa.struct([  # one entry of a game's transcript: a host announcement or a player's move
    ("step", pa.int32()),        # host step (0-based): every pending move of every game is one batch per model
    ("round", pa.int32()),       # Ask-Guess Q&A round / SpyFall round / TofuKingdom question number (0 = setup)
    ("speaker", pa.string()),    # "host", "questioner", "answerer", "player3", "prince", …
    ("role", pa.string()),       # the speaker's secret role: spy / villager / Princess / Queen …; "host"
    ("model", pa.string()),      # the model that spoke; null for the host
    ("kind", pa.string()),       # announce / describe / ask / answer / vote / question / choose
    ("text", pa.string()),       # what the other players heard ("": the empty value; null: nothing public)
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
    ("outcome", pa.string()),        # Ask-Guess ST/EE/RLE/AME/CE; SpyFall spy/villagers (discarded: the most-voted
                                     # name was no living player, not finished); TofuKingdom winning camp
                                     # prince/queen/spy; else null when the game did not finish by the rules
    ("end_reason", pa.string()),     # see dialogbench/gameeval/README.md (backend_error rows are replayed next run)
    ("finished", pa.bool_()),        # ended by the game's rules (the paper's "successful trial")
    ("rounds", pa.int32()),
    ("spy_living_rounds", pa.int32()),  # SpyFall: rounds the spy took part in; null for the other games
    ("chat_errors", pa.int32()),     # moves that were unparseable or broke a rule (a failed backend call is none)
    ("steps", pa.int32()),           # host steps the game took
    ("prompt_tokens", pa.int64()),
    ("completion_tokens", pa.int64()),
    ("transcript", pa.list_(GAMEEVAL_EVENT)),
    *WRITTEN,
    ("constrained_moves", pa.int32()),  # moves held to their JSON format by constrained decoding
    # The backend's token counts of each transcript entry's move, aligned with `transcript` (entry i's move is item
    # i; null for host entries). Their sums are prompt_tokens / completion_tokens. Null in files written before
    # they were kept. Top-level lists rather than new GAMEEVAL_EVENT fields, so older files read with newer ones
    # whatever the DuckDB (1.1 refuses to union Parquet structs whose fields differ).
    ("move_prompt_tokens", pa.list_(pa.int32())),
    ("move_completion_tokens", pa.list_(pa.int32())),
    # Each transcript entry's flags, aligned with `transcript` like the token lists (null: none; the whole list null
    # in files written before): "placeholder: speak, thought" (the move's fields that repeat the prompt's placeholder
    # text, placeholders.py), "said its own word" (a SpyFall description heard as said)… "; "-joined.
    ("move_flags", pa.list_(pa.string())),
    ("placeholder_moves", pa.int32()),  # moves flagged "placeholder" (null in files written before they were kept)
])

GAMES_TABLE = Table("gameeval_games", GAMEEVAL_GAMES, partition=("game",),
                    done="end_reason IS DISTINCT FROM 'backend_error'",
                    done_stored="t.end_reason IS DISTINCT FROM 'backend_error'")
TABLES = (GAMES_TABLE,)
