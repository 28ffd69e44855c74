"""Uncertainty for every family's numbers: one cluster bootstrap (``bootstrap``), the units each headline number
rests on (``units``), and paired comparisons of two models (``compare``)."""
