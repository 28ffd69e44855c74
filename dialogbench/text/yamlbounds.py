"""YAML read within bounds: a config cannot make the process that reads it allocate without limit.

An alias repeats the node it names without copying it, so ten lines of ``b: &b [*a, *a, …]`` (the "billion
laughs") read in a millisecond into a graph that becomes 10⁹ nodes as soon as something walks it as a tree (pydantic,
``model_dump``, a fingerprint, JSON for Prefect). So the bounds are counted while the YAML is composed, before any
Python object exists, on the graph itself (each node's expanded size computed once, from its children's): the check
costs time and memory in proportion to the file, never to its expansion. Exceeding one is a ``YAMLBoundsError``
naming the line of the node (or alias) that crossed it; ``configs/README.md`` ("Limits") lists them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.events import AliasEvent, ScalarEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode


@dataclass(frozen=True)
class YAMLLimits:
    """Generous for real configs (the shipped ones: 4 kB, 168 nodes, 1,141 characters of text, 6 levels, 2
    aliases); ``configs/README.md`` ("Limits") lists them."""

    file_bytes: int = 1_000_000          # the file itself
    aliases: int = 1_000                 # ``*name`` references in the file
    nodes: int = 100_000                 # nodes once every alias is expanded (a scalar, a list, a mapping: 1 each)
    text_chars: int = 4_000_000          # characters of all scalars once every alias is expanded
    depth: int = 64                      # nesting of lists and mappings (a scalar counts as a level)
    string_chars: int = 100_000          # one scalar (a system prompt, a script reply)


LIMITS = YAMLLimits()


class YAMLBoundsError(ValueError):
    """The YAML crosses one of ``YAMLLimits``; ``line`` is 1-based (None: the file as a whole)."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line, self.message = line, message


def megabytes(size: int) -> str:
    """``1_000_000`` → "1 MB", ``12_345_678`` → "12.3 MB" (decimal megabytes, as the limits are written)."""
    return f"{size / 1e6:,.1f}".removesuffix(".0") + " MB"


class BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that counts, while composing, the aliases, the depth, each scalar's length and every
    node's expanded size (nodes and characters), and stops at the first bound crossed."""

    limits = LIMITS

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0
        self._sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, characters) once expanded

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        event = self.peek_event()
        line = event.start_mark.line + 1 if event.start_mark else None
        if isinstance(event, AliasEvent):
            self._aliases += 1
            if self._aliases > self.limits.aliases:
                raise YAMLBoundsError(line, f"more than {self.limits.aliases:,} aliases (*name)")
        elif isinstance(event, ScalarEvent) and len(event.value) > self.limits.string_chars:
            raise YAMLBoundsError(line, f"a string of {len(event.value):,} characters, over the "
                                        f"{self.limits.string_chars:,} limit")
        self._depth += 1
        if self._depth > self.limits.depth:
            raise YAMLBoundsError(line, f"nested deeper than {self.limits.depth} levels")
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        nodes, chars = self._size(node)
        if nodes > self.limits.nodes:
            raise YAMLBoundsError(line, f"the YAML expands to more than {self.limits.nodes:,} nodes (aliases "
                                        f"repeat what they name: {self._aliases:,} of them so far)")
        if chars > self.limits.text_chars:
            raise YAMLBoundsError(line, f"the YAML expands to more than {self.limits.text_chars:,} characters of "
                                        f"text (aliases repeat what they name: {self._aliases:,} of them so far)")
        return node

    def _size(self, node: Node) -> tuple[int, int]:
        """(nodes, characters) of ``node`` with every alias expanded; its children's are already known (composed
        before it; an alias names a node composed earlier, PyYAML refuses one naming its own ancestor)."""
        known = self._sizes.get(id(node))
        if known is not None:
            return known
        if isinstance(node, ScalarNode):
            size = (1, len(node.value))
        else:
            children = [c for pair in node.value for c in pair] if isinstance(node, MappingNode) else \
                node.value if isinstance(node, SequenceNode) else []
            sizes = [self._size(c) for c in children]
            size = (1 + sum(s[0] for s in sizes), sum(s[1] for s in sizes))
        self._sizes[id(node)] = size
        return size

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        """A scalar Python cannot build (an integer of 5,000 digits) is a YAML error at its line, not a crash."""
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError) as exc:
            raise yaml.constructor.ConstructorError(None, None, f"cannot read this value ({exc})",
                                                    node.start_mark) from None


def yaml_problem(exc: yaml.YAMLError) -> tuple[int | None, str]:
    """(1-based line or None, one line saying what is wrong) of a PyYAML error."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        what = "; ".join(part for part in (exc.context, exc.problem) if part)
        return (mark.line + 1 if mark else None), " ".join(what.split())
    return None, " ".join(str(exc).split())


def _unprintable(text: str, exc: yaml.reader.ReaderError, source: str) -> str:
    """One line naming the file, line and character PyYAML's reader refused: a control character YAML does not allow
    written raw (NUL, ESC, BEL, ...). Its code point is written out, never the character itself (an ESC would run in
    the terminal that prints the line)."""
    line = text.count("\n", 0, exc.position) + 1
    code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
    what, escape = (f"the byte {code:#04x} (a control character)", f"\\x{code:02x}") if code < 0x100 else \
        (f"the character U+{code:04X}", f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return (f"{source}:{line}: {what} is not allowed in YAML; remove it, or write it as an escape in a "
            f'double-quoted string ("{escape}")')


def load_yaml_text(text: str, source: str, limits: YAMLLimits = LIMITS) -> Any:
    """The one document in ``text``, read within ``limits``; every problem is a ``ValueError`` whose message is
    one line: ``<source>:<line>: what`` (``YAMLBoundsError`` for a bound, else "not valid YAML")."""
    if len(text) > limits.file_bytes:
        raise YAMLBoundsError(None, f"{source}: {len(text):,} characters, over the limit of {limits.file_bytes:,} "
                                    "for a config")
    try:
        loader = BoundedLoader(text)  # PyYAML's reader refuses a control character (NUL, ESC, BEL) here
    except yaml.reader.ReaderError as exc:
        raise ValueError(_unprintable(text, exc, source)) from None
    loader.limits = limits
    try:
        return loader.get_single_data()
    except YAMLBoundsError as exc:
        raise YAMLBoundsError(exc.line, f"{source}:{exc.line}: {exc.message}" if exc.line else
                              f"{source}: {exc.message}") from None
    except yaml.YAMLError as exc:
        line, what = yaml_problem(exc)
        raise ValueError(f"{source}:{line}: not valid YAML: {what}" if line else
                         f"{source}: not valid YAML: {what}") from None
    except RecursionError:  # the depth bound stops this first; kept so a lower recursion limit cannot crash
        raise YAMLBoundsError(None, f"{source}: nested too deep to read") from None
    finally:
        loader.dispose()


def read_yaml_file(path: str | Path, source: str | None = None, limits: YAMLLimits = LIMITS) -> Any:
    """``load_yaml_text`` of the file at ``path``, read no further than ``limits.file_bytes`` (so a huge file, or
    a device that never ends, is refused without being read whole). OSError (a missing file) passes through; a
    file that is not UTF-8 is a ``ValueError`` naming it."""
    source = str(path) if source is None else source
    with open(path, "rb") as handle:
        data = handle.read(limits.file_bytes + 1)
    if len(data) > limits.file_bytes:
        size = Path(path).stat().st_size if Path(path).is_file() else 0
        what = f"a file of {megabytes(size)}" if size > limits.file_bytes else "a file"
        raise YAMLBoundsError(None, f"{source}: {what}, over the {megabytes(limits.file_bytes)} limit for a config")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ValueError(f"{source}:{line}: not UTF-8 text (byte {exc.object[exc.start]:#04x})") from None
    return load_yaml_text(text, source, limits)
