"""Where the secrets of the URLs in a text are: found by parsing each URL, not by a pattern over the whole text.

A URL's credentials are written unencoded more often than not (``postgresql://user:p/a#ss@host/db``,
``https://u:p@ss@host``), and a standard parser (``urllib.parse.urlsplit``) then cuts the authority at the
password's first ``/``, ``?`` or ``#`` and sees no password at all; a token pasted as the user name
(``https://ghp_…@github.com/``) has no ``:`` to look for; a key in the query (``?api_key=…``, ``&sig=…``) sits
after the host. So, for each ``scheme://`` in the text:

- its extent: to the first whitespace (not to a quote or a bracket: a password may hold one, and a host followed
  by one still reads as a host);
- its userinfo: up to the LAST ``@`` followed by a host (a name or ``[IPv6]``, an optional port, then the end or a
  character no host holds) whose userinfo is plausible: ``user:password`` with no ``/?#`` in the user (the
  password may hold anything: ``/ # ? @ :``), or a user name alone with none of ``/?#`` (so
  ``https://registry.example/@scope/pkg`` has none). The password is a secret, and so is a user name that looks
  like a token (a known token prefix, or 16+ token characters mixing letters and digits; ``git@``, ``alice@``
  are left);
- its query and fragment: each ``name=value`` whose name names a secret (``secret_name``, plus ``key``, ``sig``
  and ``signature``, as in signed URLs).

Reading the last ``@`` errs towards hiding: in ``https://u:pw@host/a@b`` everything from ``pw`` to the second
``@`` is taken for the password, and in ``http://host:8080/u/@alice`` ``8080/u/`` is. That is a stored copy made
less readable, never a secret kept.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Callable, Iterator, NamedTuple

_SCHEME = re.compile(r"(?i)(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://")
_END = re.compile(r"\s")
# A host after the '@': a name (or an IPv6 literal), an optional port, then nothing a host or userinfo could go on with.
_HOST = re.compile(r"(?:\[[0-9A-Za-z:.%]+\]|[A-Za-z0-9][A-Za-z0-9._~%-]*)(?::[0-9]*)?(?![A-Za-z0-9._~%:@\[-])")
_USER_STOP = re.compile(r"[/?#]")  # a user name holds none of these: one before the '@' means it is no userinfo
_TOKEN_PREFIX = re.compile(r"(?:sk-|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|ft|oas|soat|cbt)-|xox[abposr]-|hf_|"
                           r"AKIA|ASIA|AIza|eyJ)[A-Za-z0-9_.-]{3,}$")
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_~+/=.-]{16,}")
_PAIR = re.compile(r"(?:^|(?<=[&;?#/]))([^=&;?#/]+)=([^&;\"'<>`\\]*)")  # a value ends where a quote closes it
QUERY_NAMES = frozenset({"key", "sig", "signature"})  # besides the names that name a secret anywhere


class Span(NamedTuple):
    """A secret's place in the text, ``text[start:end]``, and what it is: ``url_password``, ``url_user`` (a token
    as the user name) or ``url_query`` (a query or fragment value under a name naming a secret)."""

    start: int
    end: int
    kind: str


def token_like(user: str) -> bool:
    """Whether a URL's user name is a token rather than a person's or a service's name."""
    if _TOKEN_PREFIX.match(user):
        return True
    return bool(_TOKEN_CHARS.fullmatch(user) and re.search(r"[0-9]", user) and re.search(r"[A-Za-z]", user))


def url_secrets(text: str, *, secret_name: Callable[[str], bool], placeholder: str = "[REDACTED]") -> list[Span]:
    """Every secret of every URL in ``text`` (see the module's docstring), in order (spans may overlap: a password
    read to the last ``@`` can hold another URL); a value already equal to ``placeholder`` is not one. Each URL is
    read independently of the others, so a password holding ``//`` hides nothing, and a URL inside another's path
    (``https://archive.example/web/https://u:pw@host/``) is read too. Positions are found once for the whole text
    and looked up by bisection: the cost grows with the text, not with URLs times ``@`` signs."""
    if "://" not in text:
        return []
    marks = _Marks(text)
    spans: list[Span] = []
    for match in _SCHEME.finditer(text):
        spans.extend(s for s in _in_url(text, match.end(), marks, secret_name)
                     if s.end > s.start and text[s.start:s.end] != placeholder)
    return sorted(spans)


class _Marks:
    """Where the characters that delimit a URL's parts are, once per text."""

    def __init__(self, text: str) -> None:
        self.length = len(text)
        self.spaces = [m.start() for m in _END.finditer(text)]
        self.colons = [m.start() for m in re.finditer(":", text)]
        self.stops = [m.start() for m in _USER_STOP.finditer(text)]
        self.schemes = [m.start() for m in _SCHEME.finditer(text)]
        self.host_end: dict[int, int] = {}  # an '@' followed by a host: where that host ends
        for at in re.finditer("@", text):
            if host := _HOST.match(text, at.end()):
                self.host_end[at.start()] = host.end()
        self.ats = list(self.host_end)  # in order

    @staticmethod
    def first(positions: list[int], lo: int, hi: int) -> int | None:
        i = bisect_left(positions, lo)
        return positions[i] if i < len(positions) and positions[i] < hi else None

    @staticmethod
    def last(positions: list[int], lo: int, hi: int) -> int | None:
        i = bisect_left(positions, hi) - 1
        return positions[i] if i >= 0 and positions[i] >= lo else None


def _in_url(text: str, begin: int, marks: _Marks, secret_name: Callable[[str], bool]) -> Iterator[Span]:
    """The secrets of the URL whose authority starts at ``begin`` (after ``//``); it ends at whitespace."""
    limit = marks.first(marks.spaces, begin, marks.length)
    limit = marks.length if limit is None else limit
    stop = marks.first(marks.stops, begin, limit)
    stop = limit if stop is None else stop  # where the path, query or fragment would start without userinfo
    colon = marks.first(marks.colons, begin, stop)  # a ':' before any '/?#' ends the user name
    host_end = None
    if colon is not None and (at := marks.last(marks.ats, colon + 1, limit)) is not None:
        if token_like(text[begin:colon]):  # user:password, the password anything up to the last '@' before a host
            yield Span(begin, colon, "url_user")
        yield Span(colon + 1, at, "url_password")
        host_end = marks.host_end[at]
    elif (at := marks.last(marks.ats, begin, stop if colon is None else colon)) is not None:
        if token_like(text[begin:at]):  # a user name alone
            yield Span(begin, at, "url_user")
        host_end = marks.host_end[at]
    host_end = stop if host_end is None else host_end
    query_end = marks.first(marks.schemes, host_end, limit)  # a URL in the query is read as one of its own
    yield from _in_query(text, host_end, limit if query_end is None else query_end, secret_name)


def _in_query(text: str, begin: int, limit: int, secret_name: Callable[[str], bool]) -> Iterator[Span]:
    """The values under secret names in the query (``?…``) and fragment (``#…``) between ``begin`` and ``limit``."""
    rest = text[begin:limit]
    fragment = rest.find("#")
    query = rest.find("?", 0, fragment if fragment >= 0 else len(rest))
    parts = []
    if query >= 0:
        parts.append((query + 1, fragment if fragment >= 0 else len(rest)))
    if fragment >= 0:
        parts.append((fragment + 1, len(rest)))  # an OAuth redirect's ``#access_token=…``
    for start, end in parts:
        for pair in _PAIR.finditer(rest[start:end]):
            name = pair.group(1)
            words = re.split(r"[^a-z0-9]+", name.lower())
            if name.lower() in QUERY_NAMES or words[-1] in ("sig", "signature") or secret_name(name):
                offset = begin + start
                yield Span(offset + pair.start(2), offset + pair.end(2), "url_query")
