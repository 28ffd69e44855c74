"""``dialogbench report``: the results as a self-contained HTML page and a Markdown file, a section (or several)
per family that registers a ``Family.report`` (``section.ReportSection``), in registry order (``report.build``).
The families' sections import the parts below the build (``section``, ``svg``, ``changes``), never the build."""
