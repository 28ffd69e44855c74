"""The explorer's address filtered to some records: ``explorer_href`` writes the ``#`` part the page's script reads
(``script.FILTERS`` says what each name selects). The families' report sections link their numbers with it; the
report's headline metrics go through ``links.metric_href``, which is handed the run's families and reads their
metrics, and so lives apart, above the families.

The address is relative (``explorer.html#…``): the report and the explorer are written to the same folder (each
run's, each board's and the top of ``<lake>/reports``: report/publish.py), so the link works from a file and over
``dialogbench serve`` alike. Every value is percent-encoded (a model's name may hold ``&``, ``#``, quotes or markup:
none of it survives as syntax) and has its control characters made visible first, as the explorer's data has them
(``textsafe``), so that the name in the link is the name the page holds. HTML-escaping the address where it is put
in an attribute stays the renderer's concern (``report.html``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import quote

from dialogbench.text.textsafe import visible

PAGE = "explorer.html"


def explorer_href(*, protocol: str | None = None, family: str | None = None, models: Iterable[str] = (),
                  judge: str | None = None, unparsed: bool = False, role: str | None = None,
                  with_: Iterable[str] = (), seats: Mapping[str, str] | Iterable[tuple[str, str]] = (),
                  keys: Iterable[str] = (), n: int | str | None = None) -> str:
    """``explorer.html#…`` showing the records of ``protocol`` (else all of ``family``'s, else all), of any of
    ``models`` (in ``role`` when given), judged by ``judge``, having ``with_`` models too, each (role, model) of
    ``seats`` among their players, each of ``keys`` among their keys, read up to ``n`` utterances, unparseable only
    when ``unparsed``. The names are in the page's order (``script.FILTERS``' ``format``)."""
    pairs: list[tuple[str, str]] = []
    scope = protocol or (f"family:{family}" if family else None)
    if scope:
        pairs.append(("protocol", scope))
    pairs += [("model", m) for m in dict.fromkeys(models) if m]
    if judge:
        pairs.append(("judge", judge))
    if unparsed:
        pairs.append(("unparsed", "1"))
    if role:
        pairs.append(("role", role))
    pairs += [("with", m) for m in dict.fromkeys(with_) if m]
    seated = seats.items() if isinstance(seats, Mapping) else seats
    pairs += [("seat", f"{r}:{m}") for r, m in seated]
    pairs += [("key", k) for k in dict.fromkeys(keys) if k]
    if n is not None and n != "":
        pairs.append(("n", str(n)))
    fragment = "&".join(f"{name}={quote(visible(str(value)), safe='')}" for name, value in pairs)
    return f"{PAGE}#{fragment}" if fragment else PAGE
