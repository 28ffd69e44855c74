"""BotChat (Algorithm 1 generation, UniEval) as pure functions over cells."""
