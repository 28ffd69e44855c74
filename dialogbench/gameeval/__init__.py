"""GameEval (Qiao et al., 2023): models play Ask-Guess, SpyFall and TofuKingdom; a host written in code
runs each game; the outcomes are the score."""
