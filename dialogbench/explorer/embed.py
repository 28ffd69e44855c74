"""Data embedded in the page as JSON inside ``<script type="application/json">``: nothing in it can end the element
or open markup (``</script>``, ``<!--``) because every ``<``, ``>`` and ``&`` is written as a JSON ``\\u`` escape,
which ``JSON.parse`` reads back unchanged; U+2028 / U+2029 are escaped too."""

from __future__ import annotations

import json
from typing import Any

ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(data: Any) -> str:
    """``data`` as compact JSON safe between ``<script type="application/json">`` and ``</script>``."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    return text.translate(str.maketrans(ESCAPES))
