"""Bounded input, safe output: text read within bounds (``yamlbounds`` for configs, ``jsonl`` for datasets,
``reply_numbers`` for the numbers in a model's reply) and text that leaves made harmless (``redact`` and
``urlsecrets`` take secrets out, ``textsafe`` makes control characters visible, ``csvsafe`` keeps a spreadsheet from
running a cell). Callers import from the module."""
