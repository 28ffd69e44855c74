"""Tiny inline-SVG charts (hand-written strings: no matplotlib, no JS, no network). Every text is escaped."""

from __future__ import annotations

import math
from html import escape

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac", "#1b9e77", "#7570b3", "#d95f02", "#66a61e", "#e7298a", "#a6761d"]
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _svg(width: float, height: float, body: list[str], label: str) -> str:
    return (f'<svg viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
            f'role="img" aria-label="{escape(label)}" {FONT}>' + "".join(body) + "</svg>")


def _text(x: float, y: float, s: str, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {extra}>{escape(str(s))}</text>'


def line_chart(series: dict[str, list[tuple[float, float]]], *, label: str, x_label: str = "N",
               y_label: str = "pass rate", y_max: float | None = None) -> str:
    """One line per series (name -> [(x, y in 0..1)]), y as %, legend on the right in the given order.
    With ``y_max``, y is a plain number on 0..y_max instead (e.g. a 1–10 rating)."""
    w, h, left, right, top, bottom = 860, 340, 56, 220, 16, 44
    pw, ph = w - left - right, h - top - bottom
    xs = sorted({x for pts in series.values() for x, _ in pts}) or [0, 1]
    x0, x1 = xs[0], max(xs[-1], xs[0] + 1)
    px = lambda x: left + (x - x0) / (x1 - x0) * pw  # noqa: E731
    scale = y_max or 1
    py = lambda y: top + (1 - y / scale) * ph  # noqa: E731
    fmt = (lambda y: f"{y:.1%}") if y_max is None else (lambda y: f"{y:.2f}")  # noqa: E731
    body = []
    for t in (0, .25, .5, .75, 1):
        t *= scale
        body.append(f'<line x1="{left}" x2="{left + pw}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#ddd"/>')
        body.append(_text(left - 6, py(t) + 4, f"{t:.0%}" if y_max is None else f"{t:g}", "end"))
    step = max(1, math.ceil(len(xs) / 14))
    for x in xs[::step]:
        body.append(_text(px(x), top + ph + 16, f"{x:g}", "middle"))
    body.append(_text(left + pw / 2, h - 6, x_label, "middle", 'font-weight="600"'))
    body.append(_text(14, top + ph / 2, y_label, "middle", f'font-weight="600" transform="rotate(-90 14 {top + ph / 2:.1f})"'))
    for i, (name, pts) in enumerate(series.items()):
        pts = [(x, y) for x, y in sorted(pts) if y is not None]
        c = color(i)
        if pts:
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
            body.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"/>')
            body.extend(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{c}"><title>{escape(name)} '
                        f'@{x:g}: {fmt(y)}</title></circle>' for x, y in pts)
        ly = top + 8 + i * 18
        body.append(f'<rect x="{w - right + 16}" y="{ly - 9}" width="14" height="4" fill="{c}"/>')
        body.append(_text(w - right + 36, ly - 3, name))
    return _svg(w, max(h, top + 18 * len(series) + 8), body, label)


def _nice_step(span: float, ticks: int = 4) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) giving about ``ticks`` intervals over ``span``."""
    raw = span / ticks if span > 0 else 1.0
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def _runs(points: list[tuple], keep) -> list[list[tuple]]:
    """``points`` (sorted by x, x consecutive integers) cut into maximal runs of consecutive x where ``keep(point)``."""
    out: list[list[tuple]] = []
    for p in points:
        if not keep(p):
            continue
        if out and out[-1][-1][0] == p[0] - 1:
            out[-1].append(p)
        else:
            out.append([p])
    return out


def band_chart(series: dict[str, list[tuple[int, float | None, float | None, float | None]]], *, x_labels: list[str],
               label: str, y_label: str = "value", percent: bool = False,
               notes: dict[str, dict[int, str]] | None = None, hollow: dict[str, set[int]] | None = None,
               colors: dict[str, str] | None = None) -> str:
    """One line per series over runs 0..len(x_labels)-1 (name -> [(x, y, low, high)]), its 95% interval a shaded band;
    legend on the right in the given order. A point whose y is None, or an x the series has no point at, is a gap:
    the line breaks there (one ``<polyline class="seg">`` per run of consecutive points; a lone point is a dot), and
    the band too (a lone interval is a bar). ``notes[name][x]``: a point's note (its tooltip; at a gap, a grey tick on
    the axis says why); ``hollow[name]``: the x whose point is drawn hollow (e.g. a value resting on part of its
    cells); ``colors[name]``: a series' colour (default: the palette in series order), to keep a model's across charts.
    y is a plain number on an axis fitted to the values and intervals, or a percentage with ``percent``."""
    notes, hollow, colors = notes or {}, hollow or {}, colors or {}
    w, h, left, right, top, bottom = 860, 300, 64, 220, 16, 44
    pw, ph = w - left - right, h - top - bottom
    found = [v for pts in series.values() for _, *vs in pts for v in vs if v is not None and math.isfinite(v)]
    lo, hi = (min(found), max(found)) if found else (0.0, 1.0)
    if hi - lo < 1e-12:
        pad = abs(hi) * 0.05 or (0.05 if percent else 1.0)
        lo, hi = lo - pad, hi + pad
    step = _nice_step(hi - lo)
    lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    count = max(len(x_labels), 1)
    px = lambda x: left + (x + 0.5) / count * pw  # noqa: E731
    py = lambda y: top + (hi - y) / (hi - lo) * ph  # noqa: E731
    scaled = step * (100 if percent else 1)
    digits = next((d for d in range(8) if abs(round(scaled, d) - scaled) <= scaled * 1e-6), 8)  # what shows the step
    tick = (lambda y: f"{y * 100:.{digits}f}%") if percent else (lambda y: f"{y:.{digits}f}")  # noqa: E731
    fmt = (lambda y: f"{y:.1%}") if percent else (lambda y: f"{y:.4g}")  # noqa: E731
    body = []
    k = 0
    while lo + k * step <= hi + step * 1e-9:
        t = lo + k * step
        body.append(f'<line x1="{left}" x2="{left + pw}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#ddd"/>')
        body.append(_text(left - 6, py(t) + 4, tick(t), "end"))
        k += 1
    every = max(1, math.ceil(len(x_labels) / 12))
    for x, name in enumerate(x_labels):
        if x % every == 0 or x == len(x_labels) - 1:
            body.append(_text(px(x), top + ph + 16, name, "middle"))
    body.append(_text(left + pw / 2, h - 6, "run", "middle", 'font-weight="600"'))
    body.append(_text(14, top + ph / 2, y_label, "middle",
                      f'font-weight="600" transform="rotate(-90 14 {top + ph / 2:.1f})"'))
    for i, (name, pts) in enumerate(series.items()):
        c, said, open_ = colors.get(name) or color(i), notes.get(name, {}), hollow.get(name, set())
        pts = sorted(pts, key=lambda p: p[0])
        for part in _runs(pts, lambda p: p[1] is not None and p[2] is not None and p[3] is not None):
            if len(part) == 1:
                x, _, low, high = part[0]
                body.append(f'<line class="band" x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{py(low):.1f}" '
                            f'y2="{py(high):.1f}" stroke="{c}" stroke-opacity=".35" stroke-width="6"/>')
            else:
                ring = [(px(x), py(high)) for x, _, _, high in part] + [(px(x), py(low)) for x, _, low, _ in part[::-1]]
                body.append(f'<polygon class="band" points="{" ".join(f"{a:.1f},{b:.1f}" for a, b in ring)}" '
                            f'fill="{c}" fill-opacity=".15" stroke="none"/>')
        for part in _runs(pts, lambda p: p[1] is not None):
            if len(part) > 1:
                path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y, _, _ in part)
                body.append(f'<polyline class="seg" points="{path}" fill="none" stroke="{c}" stroke-width="2"/>')
        for x, y, low, high in pts:
            note = f"; {said[x]}" if said.get(x) else ""
            where = x_labels[x] if 0 <= x < len(x_labels) else f"{x}"
            if y is None:
                if note:
                    body.append(f'<line class="gap" x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{top + ph - 6}" '
                                f'y2="{top + ph}" stroke="#999" stroke-width="2"><title>{escape(name)} @{escape(where)}'
                                f': not drawn{escape(note)}</title></line>')
                continue
            band = "" if low is None or high is None else f" [{fmt(low)}, {fmt(high)}]"
            fill = 'fill="#fff" stroke="' + c + '" stroke-width="1.5"' if x in open_ else f'fill="{c}"'
            body.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" {fill}><title>{escape(name)} @{escape(where)}'
                        f": {fmt(y)}{band}{escape(note)}</title></circle>")
        ly = top + 8 + i * 18
        body.append(f'<rect x="{w - right + 16}" y="{ly - 9}" width="14" height="4" fill="{c}"/>')
        body.append(_text(w - right + 36, ly - 3, name))
    return _svg(w, max(h, top + 18 * len(series) + 8), body, label)


def _diverging(v: float) -> str:
    """0 -> red, 0.5 -> near white, 1 -> blue."""
    lo, mid, hi = (215, 48, 39), (247, 247, 247), (69, 117, 180)
    a, b, t = (lo, mid, v * 2) if v < .5 else (mid, hi, (v - .5) * 2)
    return "#" + "".join(f"{round(p + (q - p) * t):02x}" for p, q in zip(a, b))


def heatmap(models: list[str], cells: dict[tuple[str, str], float | None], *, label: str) -> str:
    """cells[(row, col)] = share of games the row model won against the column model. The colour is the
    margin over the mirror cell (blue: row wins more often, red: loses more often), so ties do not tint it."""
    cell, left, top = 46, 170, 130
    n = len(models)
    w, h = left + n * cell + 120, top + n * cell + 8  # room for the last rotated column label
    body = []
    for j, m in enumerate(models):
        x = left + j * cell + cell / 2
        body.append(_text(x, top - 6, m, "start", f'transform="rotate(-50 {x:.1f} {top - 6})"'))
    for i, row in enumerate(models):
        y = top + i * cell
        body.append(_text(left - 6, y + cell / 2 + 4, row, "end"))
        for j, col in enumerate(models):
            x, v = left + j * cell, cells.get((row, col))
            mirror = cells.get((col, row))
            margin = None if v is None else 0.5 + (v - (mirror if mirror is not None else v)) / 2
            fill = "#eee" if v is None else _diverging(margin)
            body.append(f'<rect x="{x}" y="{y}" width="{cell - 1}" height="{cell - 1}" fill="{fill}">'
                        f'<title>{escape(row)} vs {escape(col)}: {"–" if v is None else f"{v:.1%}"}</title></rect>')
            if v is not None:
                ink = "#fff" if abs(margin - .5) > .3 else "#222"
                body.append(_text(x + cell / 2, y + cell / 2 + 4, f"{v * 100:.0f}", "middle", f'fill="{ink}"'))
    return _svg(w, h, body, label)


def stacked_bars(rows: list[tuple[str, list[float]]], *, parts: list[tuple[str, str]], label: str) -> str:
    """Horizontal bars of shares (each row's values sum to about 1); parts = [(name, colour)]."""
    left, bar, gap, pw, top = 170, 20, 6, 560, 28
    h = top + len(rows) * (bar + gap) + 8
    body = []
    for k, (name, c) in enumerate(parts):
        body.append(f'<rect x="{left + k * 90}" y="6" width="12" height="12" fill="{c}"/>')
        body.append(_text(left + k * 90 + 16, 16, name))
    for i, (model, values) in enumerate(rows):
        y, x = top + i * (bar + gap), float(left)
        body.append(_text(left - 6, y + bar / 2 + 4, model, "end"))
        for (name, c), v in zip(parts, values):
            width = max(0.0, v) * pw
            body.append(f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="{bar}" fill="{c}">'
                        f'<title>{escape(model)} {escape(name)}: {v:.1%}</title></rect>')
            if width > 34:
                body.append(_text(x + width / 2, y + bar / 2 + 4, f"{v:.0%}", "middle", 'fill="#fff"'))
            x += width
    return _svg(left + pw + 10, h, body, label)


def box_plot(rows: list[tuple[str, dict]], *, label: str, x_label: str = "tokens per utterance (log scale)") -> str:
    """Horizontal boxes on a log10 axis; each dict has lo, q1, median, q3, hi (whiskers lo..hi)."""
    left, bar, gap, pw, top = 170, 16, 8, 600, 10
    hi = max([r["hi"] for _, r in rows if r.get("hi")] + [10])
    decades = max(1, math.ceil(math.log10(hi)))
    px = lambda v: left + math.log10(max(v, 1)) / decades * pw  # noqa: E731
    plot_h = len(rows) * (bar + gap)
    body = []
    for d in range(decades + 1):
        x = px(10 ** d)
        body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + plot_h}" stroke="#ddd"/>')
        body.append(_text(x, top + plot_h + 16, f"{10 ** d:,}", "middle"))
    body.append(_text(left + pw / 2, top + plot_h + 36, x_label, "middle", 'font-weight="600"'))
    for i, (model, r) in enumerate(rows):
        y, c = top + i * (bar + gap), color(i)
        mid = y + bar / 2
        body.append(_text(left - 6, mid + 4, model, "end"))
        tip = (f"{model}: min {r['lo']:g}, q1 {r['q1']:g}, median {r['median']:g}, q3 {r['q3']:g}, "
               f"max {r['hi']:g}")
        body.append(f'<g><title>{escape(tip)}</title>'
                    f'<line x1="{px(r["lo"]):.1f}" x2="{px(r["hi"]):.1f}" y1="{mid}" y2="{mid}" stroke="#555"/>'
                    f'<rect x="{px(r["q1"]):.1f}" y="{y}" width="{max(1.0, px(r["q3"]) - px(r["q1"])):.1f}" '
                    f'height="{bar}" fill="{c}" fill-opacity=".55" stroke="{c}"/>'
                    f'<line x1="{px(r["median"]):.1f}" x2="{px(r["median"]):.1f}" y1="{y}" y2="{y + bar}" '
                    f'stroke="#111" stroke-width="2"/></g>')
    return _svg(left + pw + 20, top + plot_h + 46, body, label)


def radar(axes: list[str], series: dict[str, list[float | None]], *, label: str, max_value: float = 10) -> str:
    """A radar (spider) chart: one axis per name, clockwise from the top, 0..max_value from the centre; one
    translucent polygon per series (values in axis order), legend on the right. A missing value sits at the
    centre and is left without a dot."""
    r_max, cx, cy, legend_x = 160, 300, 215, 560
    n = max(len(axes), 1)
    h = max(405, 30 + 18 * len(series))
    angle = lambda i: -math.pi / 2 + 2 * math.pi * i / n  # noqa: E731
    at = lambda i, v: (cx + r_max * v / max_value * math.cos(angle(i)),  # noqa: E731
                       cy + r_max * v / max_value * math.sin(angle(i)))
    body = []
    for k in range(1, 6):
        ring = " ".join(f"{x:.1f},{y:.1f}" for x, y in (at(i, max_value * k / 5) for i in range(n)))
        body.append(f'<polygon points="{ring}" fill="none" stroke="#ddd"/>')
        body.append(_text(cx + 3, cy - r_max * k / 5 + 11, f"{max_value * k / 5:g}", "start", 'fill="#888" font-size="10"'))
    for i, name in enumerate(axes):
        x, y = at(i, max_value)
        body.append(f'<line x1="{cx}" y1="{cy}" x2="{x:.1f}" y2="{y:.1f}" stroke="#ccc"/>')
        lx, ly = at(i, max_value * 1.1)
        c = math.cos(angle(i))
        anchor = "middle" if abs(c) < 0.2 else ("start" if c > 0 else "end")
        body.append(_text(lx, ly + 4, name, anchor, 'class="axis" font-weight="600"'))
    for j, (name, values) in enumerate(series.items()):
        c = color(j)
        points = [at(i, v or 0) for i, v in enumerate(values)]
        tip = f"{name}: " + ", ".join(f"{a} {'–' if v is None else f'{v:.2f}'}" for a, v in zip(axes, values))
        body.append(f'<polygon class="series" points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in points)}" '
                    f'fill="{c}" fill-opacity=".12" stroke="{c}" stroke-width="2"><title>{escape(tip)}</title></polygon>')
        body.extend(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{c}"/>'
                    for (x, y), v in zip(points, values) if v is not None)
        ly = 24 + j * 18
        body.append(f'<rect x="{legend_x}" y="{ly - 9}" width="14" height="10" fill="{c}" fill-opacity=".6"/>')
        body.append(_text(legend_x + 20, ly, name))
    return _svg(legend_x + 220, h, body, label)
