"""The explorer page's script (inline, no library): read the embedded data, fill the filters and the counts, render
the records that match a page at a time. Every text from the data goes into the page as ``textContent``, never as
markup. ``__PAGE_SIZE__`` is replaced by the records shown per page.

The filters are kept in the address's ``#`` part, so a view can be linked (the report links each of its numbers to
the records behind it: dialogbench/explorer/links.py writes those addresses). ``FILTERS`` reads and writes that part
and says whether a record matches; it touches no page, so the tests run it under Node. The ``#`` part's names:

- ``protocol``: a protocol (``botchat_unieval``, ``mtbench101``, ``gameeval_spyfall``, …) or ``family:NAME``;
- ``model``, once or more: the records of any of them (the two sides of a comparison);
- ``judge``; ``verdict`` (``PROTOCOL`` NUL ``VERDICT``); ``unparsed`` (``1``); ``q``: words the record's text holds;
- ``role``: the ``model`` models in this role (a name / value pair of the record's ``fields`` blocks: a game's
  Players), e.g. ``model=A&model=B&role=spy``: the games A or B played as the spy;
- ``with``, once or more: models the record has as well (``model=A&with=B``: A's games against B);
- ``seat``, once or more, ``ROLE:MODEL``: that pair among the record's fields (``seat=villager:B``);
- ``key``, once or more: an exact word of the record's keys (its ``search`` text cut at spaces and ``/``: an
  MT-Bench-101 task code, an Ask-Guess word or setting, a seed);
- ``n``: the utterances the judge read (the record's dialogues are shown up to the n-th): BotChat's N;
- ``page``: the page of records shown (1 first).

The form has a field for ``protocol``, two models, ``judge``, ``verdict``, ``unparsed`` and ``q``; the rest, when a
link sets them, are listed under the form and can be dropped."""

FILTERS = r"""
const Filters = (() => {
  const NO_JUDGE = "(none: a game)";
  const ONE = ["protocol", "judge", "verdict", "q", "role", "n"], MANY = ["model", "with", "seat", "key"];
  const ORDER = ["protocol", "model", "judge", "verdict", "unparsed", "q", "role", "with", "seat", "key", "n", "page"];
  const pair = (name, value) => `${name}\u0000${value}`;
  const seat = (text) => {  // ROLE:MODEL (a model's name may hold a colon, a role's does not)
    const at = text.indexOf(":");
    return at < 0 ? pair(text, "") : pair(text.slice(0, at), text.slice(at + 1));
  };
  function empty() {
    return {protocol: "", model: [], judge: "", verdict: "", unparsed: false, q: "", role: "", with: [], seat: [],
            key: [], n: "", page: 1};
  }
  // the filters an address's # part (without the #) sets
  function parse(text) {
    const found = new URLSearchParams(text), f = empty();
    for (const k of ONE) f[k] = found.get(k) || "";
    for (const k of MANY) f[k] = [...new Set(found.getAll(k).filter((v) => v !== ""))];
    f.unparsed = found.get("unparsed") === "1";
    f.page = Math.max(1, parseInt(found.get("page") || "1", 10) || 1);
    return f;
  }
  // the # part (without the #) of filters, in one order; what is not set is left out
  function format(f) {
    const out = new URLSearchParams();
    for (const k of ORDER) {
      const v = f[k];
      if (Array.isArray(v)) for (const x of v) out.append(k, x);
      else if (k === "unparsed") { if (v) out.set(k, "1"); }
      else if (k === "page") { if (v > 1) out.set(k, String(v)); }
      else if (v) out.set(k, v);
    }
    return out.toString();
  }
  // what a record is matched on beyond its own fields: the text the search reads (the shared dialogues' lines
  // included), its keys, its fields' pairs (a game's role -> model) and the utterances its dialogues show
  function prepare(r, data) {
    const title = (p) => (data.protocols[p] && data.protocols[p].title) || p;
    const lines = (b) => ((data.texts[b.ref] || {}).lines || []).slice(0, b.upto || undefined);
    r.refs = r.blocks.filter((b) => b.kind === "dialogue").map((b) => b.ref);
    const bodies = r.blocks.map((b) => b.kind === "dialogue" ? lines(b).join("\n") : JSON.stringify(b));
    r.hay = [r.id, r.title, title(r.protocol), r.models.join(" "), r.judge || "", r.verdict, r.raw || "", r.search,
             r.refs.join(" "), JSON.stringify(r.result), ...bodies].join("\n").toLowerCase();
    r.keys = new Set(String(r.search || "").split(/[\s/]+/).filter(Boolean));
    r.seats = new Set(r.blocks.filter((b) => b.kind === "fields")
                       .flatMap((b) => (b.pairs || []).map(([k, v]) => pair(k, v))));
    r.ns = new Set(r.blocks.filter((b) => b.kind === "dialogue").map((b) => String(b.upto)));
    return r;
  }
  function inScope(r, f) {
    if (!f.protocol) return true;
    return f.protocol.startsWith("family:") ? r.family === f.protocol.slice(7) : r.protocol === f.protocol;
  }
  function matches(r, f) {
    if (!inScope(r, f)) return false;
    if (f.model.length && !f.model.some((m) => f.role ? r.seats.has(pair(f.role, m)) : r.models.includes(m))) {
      return false;
    }
    if (f.role && !f.model.length && ![...r.seats].some((s) => s.startsWith(pair(f.role, "")))) return false;
    if (f.with.some((m) => !r.models.includes(m))) return false;
    if (f.seat.some((s) => !r.seats.has(seat(s)))) return false;
    if (f.key.some((k) => !r.keys.has(k))) return false;
    if (f.n && !(r.ns.size === 1 && r.ns.has(f.n))) return false;
    if (f.judge && (r.judge || NO_JUDGE) !== f.judge) return false;
    if (f.verdict && `${r.protocol}\u0000${r.verdict}` !== f.verdict) return false;
    if (f.unparsed && r.parsed) return false;
    const q = f.q.trim().toLowerCase();
    if (q && !q.split(/\s+/).every((word) => r.hay.includes(word))) return false;
    return true;
  }
  return {NO_JUDGE, empty, parse, format, prepare, inScope, matches};
})();
"""

SCRIPT = r"""
(() => {
"use strict";
__FILTERS__
const DATA = JSON.parse(document.getElementById("explorer-data").textContent);
const PAGE = __PAGE_SIZE__;
const NO_JUDGE = Filters.NO_JUDGE;
const $ = (id) => document.getElementById(id);
const el = (tag, attrs, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
};
const fmt = (n) => Number(n).toLocaleString("en-US");
const plural = (n, word) => `${fmt(n)} ${word}${n === 1 ? "" : "s"}`;
const records = DATA.records, protocols = DATA.protocols;
const title = (p) => (protocols[p] && protocols[p].title) || p;
const familyTitle = (f) => DATA.families[f] || f;
const lines = (b) => ((DATA.texts[b.ref] || {}).lines || []).slice(0, b.upto || undefined);

// what the filters read of each record, and how many records show each shared dialogue
const uses = {};
for (const r of records) {
  Filters.prepare(r, DATA);
  for (const ref of new Set(r.refs)) uses[ref] = (uses[ref] || 0) + 1;
}

function summary() {
  const body = $("caps-body");
  for (const [p, c] of Object.entries(protocols)) {
    const capped = c.shown < c.records;
    const note = capped ? `capped at ${fmt(DATA.limit)}: an even share of each model, its unparseable ones first ` +
                          "(more: dialogbench explore --limit N)" : "all";
    body.append(el("tr", {}, el("td", {text: familyTitle(c.family)}), el("td", {text: title(p)}),
      ...[c.records, c.unparsed, c.shown, c.unparsed_shown].map((n) => el("td", {class: "num", text: fmt(n)})),
      el("td", {class: capped ? "warn" : "", text: note})));
  }
  if (!Object.keys(protocols).length) {
    body.append(el("tr", {}, el("td", {colspan: 7, text: "No family with explorer records is registered."})));
  }
  for (const note of DATA.notes) $("notes").append(el("li", {text: note}));
}

// a select's options: [value, label, group]; the chosen value is kept when it is still offered
function options(select, entries, all) {
  const keep = select.value, groups = {};
  select.replaceChildren(el("option", {value: "", text: all}));
  for (const [value, label, group] of entries) {
    const option = el("option", {value, text: label});
    if (!group) { select.append(option); continue; }
    if (!groups[group]) groups[group] = select.appendChild(el("optgroup", {label: group}));
    groups[group].append(option);
  }
  select.value = [...select.options].some((o) => o.value === keep) ? keep : "";
}

const tally = (list, key) => list.reduce((m, r) => {
  for (const k of [].concat(key(r))) m.set(k, (m.get(k) || 0) + 1);
  return m;
}, new Map());
const byKey = (a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;

function filterOptions() {
  const entries = [];
  for (const [f, n] of tally(records, (r) => r.family)) {
    entries.push([`family:${f}`, `${familyTitle(f)}: all (${fmt(n)})`, familyTitle(f)]);
    for (const [p, m] of tally(records.filter((r) => r.family === f), (r) => r.protocol)) {
      entries.push([p, `${title(p)} (${fmt(m)})`, familyTitle(f)]);
    }
  }
  options($("f-protocol"), entries, `all (${fmt(records.length)})`);
  const models = [...tally(records, (r) => r.models)].sort(byKey).map(([m, n]) => [m, `${m} (${fmt(n)})`]);
  options($("f-model"), models, "all models");
  options($("f-model2"), models, "no other");
  options($("f-judge"), [...tally(records, (r) => r.judge || NO_JUDGE)].sort(byKey)
          .map(([j, n]) => [j, `${j} (${fmt(n)})`]), "all judges");
  verdictOptions();
}

// a verdict is a protocol's ("score 7" of MT-Bench-101): offered for the protocols in scope
function verdictOptions() {
  const f = state();
  const counts = tally(records.filter((r) => Filters.inScope(r, f)), (r) => `${r.protocol}\u0000${r.verdict}`);
  options($("f-verdict"), [...counts].sort(byKey).map(([k, n]) => {
    const [p, v] = k.split("\u0000");
    return [k, `${v} (${fmt(n)})`, title(p)];
  }), "any verdict");
}

// the filters a link set that the form has no field for (role, with, seat, key, n, models past two)
let pinned = Filters.empty();

function state() {
  const models = [$("f-model").value, $("f-model2").value, ...pinned.model].filter(Boolean);
  return {...pinned, protocol: $("f-protocol").value, model: [...new Set(models)], judge: $("f-judge").value,
          verdict: $("f-verdict").value, unparsed: $("f-unparsed").checked, q: $("f-q").value.trim(), page: 1};
}

function showPinned() {
  const said = [...pinned.model.map((m) => `or model ${m}`), pinned.role ? `the model playing ${pinned.role}` : "",
                ...pinned.with.map((m) => `with ${m}`), ...pinned.seat.map((s) => s.replace(":", ": ")),
                ...pinned.key.map((k) => `key ${k}`), pinned.n ? `N = ${pinned.n}` : ""].filter(Boolean);
  $("pinned-what").textContent = said.join("; ");
  $("pinned").hidden = !said.length;
}

// the blocks
function kv(pairs) {
  const rows = pairs.filter(([, v]) => v !== null && v !== undefined && v !== "");
  if (!rows.length) return el("p", {class: "note", text: "nothing"});
  return el("table", {class: "kv"}, el("tbody", {}, ...rows.map(([k, v]) =>
    el("tr", {}, el("td", {text: k}), el("td", {text: String(v)})))));
}

function dialogueBlock(b) {
  const t = DATA.texts[b.ref], shown = lines(b), speakers = t.speakers || ["A", "B"], body = el("tbody");
  shown.forEach((line, i) => {
    const n = i + 1, seed = n <= (t.seed || 0), flagged = n === b.mark;
    body.append(el("tr", {class: flagged ? "flag" : seed ? "seed" : ""},
      el("td", {class: "who", text: String(n)}),
      el("td", {class: "who", text: speakers[i % speakers.length] + (seed ? " (seed)" : "")}),
      el("td", {class: "text", text: line}),
      flagged ? el("td", {class: "why", text: "⚑ " + (b.note || "")}) : null));
  });
  const others = (uses[b.ref] || 0) - 1;
  const link = others > 0 ? el("button", {class: "link", type: "button",
                                          text: `this dialogue in ${plural(others, "other record")}`}) : null;
  if (link) link.addEventListener("click", () => { reset(); $("f-q").value = b.ref; update(); });
  const head = `${b.title} — ${shown.length} of ${plural(t.lines.length, "utterance")} shown to the judge `;
  return el("div", {class: "block"}, el("h4", {text: head}, link),
            el("div", {class: "scroll"}, el("table", {class: "dlg"}, body)));
}

function turnsBlock(b) {
  const body = el("tbody");
  b.rows.forEach((row, i) => {
    const said = row.text === null ? el("span", {class: "more", text: "(nothing said aloud)"}) : row.text;
    const text = el("td", {class: "text"}, said);
    if (row.note) text.append(el("div", {class: "thought", text: "thought: " + row.note}));
    if (row.bad) text.append(el("div", {class: "why", text: "✗ " + row.bad}));
    if (row.raw) {
      text.append(el("details", {}, el("summary", {text: "raw reply"}), el("pre", {class: "raw", text: row.raw})));
    }
    body.append(el("tr", {class: row.bad ? "bad" : row.mark ? "flag" : ""},
                   el("td", {class: "who", text: String(i + 1)}), el("td", {class: "who", text: row.who}), text));
  });
  return el("div", {class: "block"}, el("h4", {text: b.title}),
            el("div", {class: "scroll"}, el("table", {class: "dlg"}, body)));
}

function block(b) {
  if (b.kind === "dialogue" && DATA.texts[b.ref]) return dialogueBlock(b);
  if (b.kind === "turns") return turnsBlock(b);
  if (b.kind === "fields") return el("div", {class: "block"}, el("h4", {text: b.title}), kv(b.pairs));
  if (b.kind === "text") {
    const passage = el("div", {class: "passage", text: b.text === null ? "" : b.text});
    return b.folded ? el("details", {}, el("summary", {text: b.title}), passage)
                    : el("div", {class: "block"}, el("h4", {text: b.title}), passage);
  }
  return el("div", {class: "block"}, el("h4", {text: b.title || b.kind}),
            el("pre", {class: "raw", text: JSON.stringify(b)}));
}

function card(r) {
  const family = familyTitle(r.family);
  const where = family === title(r.protocol) ? family : `${family} · ${title(r.protocol)}`;
  const badge = r.parsed || r.verdict === "unparsed" ? null
    : el("span", {class: "tag verdict bad", text: r.judge === null ? "chat errors" : "unparseable"});
  const head = el("header", {}, el("span", {class: "tag", text: where}), el("h3", {text: r.title}),
                  el("span", {class: "tag verdict" + (r.parsed ? "" : " bad"), text: r.verdict}), badge);
  const meta = el("dl", {class: "meta"},
                  el("dt", {text: r.models.length > 1 ? "Models" : "Model"}), el("dd", {text: r.models.join(", ")}),
                  el("dt", {text: "Judge"}), el("dd", {text: r.judge || "none (the rules score it)"}),
                  el("dt", {text: "Record"}), el("dd", {text: r.id}));
  const result = Object.entries(r.result || {});
  const judged = r.judge === null ? [el("h4", {text: "Result"}), kv(result)] : [
    el("h4", {text: `Judge's raw output (${r.judge})`}),
    el("pre", {class: "raw judge-raw", text: r.raw === null ? "(none stored)" : r.raw}),
    el("h4", {text: r.parsed ? "Parsed from it" : "Parsed from it: nothing (unparseable)"}), kv(result)];
  const blocks = r.blocks.map(block), side = r.blocks.map((b) => b.kind === "dialogue");
  const pair = side.filter(Boolean).length === 2;  // two conversations judged side by side
  const body = !pair ? blocks
    : [...blocks.filter((_, i) => !side[i]), el("div", {class: "pair"}, ...blocks.filter((_, i) => side[i]))];
  return el("article", {class: "rec" + (r.parsed ? "" : " unparsed"), "data-id": r.id, "data-protocol": r.protocol,
                        "data-models": r.models.join(","), "data-parsed": String(r.parsed)},
            head, meta, ...judged, ...body);
}

let page = 0, shown = [];

function render() {
  const pages = Math.max(1, Math.ceil(shown.length / PAGE));
  page = Math.max(0, Math.min(page, pages - 1));
  const start = page * PAGE, end = Math.min(shown.length, start + PAGE);
  $("records").replaceChildren(...shown.slice(start, end).map(card));
  const unparsed = shown.filter((r) => !r.parsed).length, all = plural(records.length, "record");
  $("count").textContent = shown.length
    ? `${plural(shown.length, "record")} match (${fmt(unparsed)} unparseable); showing ${fmt(start + 1)}–` +
      `${fmt(end)}. ${all} on this page in all.`
    : `No record matches (${all} on this page in all).`;
  for (const pager of document.querySelectorAll(".pager")) {
    pager.querySelector(".where").textContent = `page ${fmt(page + 1)} of ${fmt(pages)}`;
    pager.querySelector(".prev").disabled = page === 0;
    pager.querySelector(".next").disabled = page >= pages - 1;
  }
}

function update(keepPage) {
  const f = state();
  shown = records.filter((r) => Filters.matches(r, f));
  if (!keepPage) page = 0;
  // what "unparseable only" would show with the other filters as they are
  const unparsed = records.filter((r) => !r.parsed && Filters.matches(r, {...f, unparsed: false})).length;
  $("unparsed-count").textContent = `(${fmt(unparsed)})`;
  render();
  const text = Filters.format({...f, page: page + 1});
  if (location.hash.slice(1) !== text) {
    history.replaceState(null, "", text ? "#" + text : location.pathname + location.search);
  }
}

function reset() {
  for (const id of ["f-protocol", "f-model", "f-model2", "f-judge", "f-verdict", "f-q"]) $(id).value = "";
  $("f-unparsed").checked = false;
  pinned = Filters.empty();
  showPinned();
  verdictOptions();
}

// a value a link names that the select does not offer (nothing on this page has it) is offered, so the filter holds
// and shows no record rather than every record
function offer(select, value) {
  if (value && ![...select.options].some((o) => o.value === value)) {
    select.append(el("option", {value, text: `${value.replace("\u0000", ": ")} (none on this page)`}));
  }
  select.value = value;
}

function restore() {
  const f = Filters.parse(location.hash.slice(1));
  offer($("f-protocol"), f.protocol);
  verdictOptions();
  const [first = "", second = "", ...more] = f.model;
  offer($("f-model"), first);
  offer($("f-model2"), second);
  offer($("f-judge"), f.judge);
  offer($("f-verdict"), f.verdict);
  $("f-q").value = f.q;
  $("f-unparsed").checked = f.unparsed;
  pinned = {...Filters.empty(), model: more, role: f.role, with: f.with, seat: f.seat, key: f.key, n: f.n};
  showPinned();
  page = f.page - 1;
}

summary();
filterOptions();
restore();
let timer = null;
$("f-protocol").addEventListener("change", () => { verdictOptions(); update(); });
for (const id of ["f-model", "f-model2", "f-judge", "f-verdict", "f-unparsed"]) {
  $(id).addEventListener("change", () => { showPinned(); update(); });
}
$("pinned-drop").addEventListener("click", () => { pinned = Filters.empty(); showPinned(); update(); });
window.addEventListener("hashchange", () => { restore(); update(true); });
$("f-q").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => update(), 150); });
$("filters").addEventListener("submit", (e) => { e.preventDefault(); update(); });
$("f-reset").addEventListener("click", () => { reset(); update(); });
for (const pager of document.querySelectorAll(".pager")) {
  const turn = (step) => { page += step; update(true); window.scrollTo(0, $("count").offsetTop); };
  pager.querySelector(".prev").addEventListener("click", () => turn(-1));
  pager.querySelector(".next").addEventListener("click", () => turn(1));
}
update(true);
document.body.dataset.ready = "1";
})();
""".replace("__FILTERS__", FILTERS)
