"""``dialogbench report``: the results as a self-contained HTML page and a Markdown file, a section (or several)
per family with a ``Family.report`` (``section.ReportSection``), in the order of the families the run was built with
(``report.build``, handed them by the entry point).
The families' sections import the parts below the build (``section``, ``svg``, ``changes``), never the build."""
