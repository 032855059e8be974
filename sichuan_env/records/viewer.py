"""A replay viewer: one deal of a records file as one self-contained HTML page.

Command line::

    python -m sichuan_env.records.viewer deals.jsonl [--deal N] [--seat S] [--review R.json]
        --out replay.html

``--deal N`` picks the record on the N-th non-blank line (0 = the first, as in
``python -m sichuan_env.records.record check``); ``--seat S`` shows the table as seat S sees it
(the other hands face down, their private choices hidden); without it every hand is shown.
Records from ``python -m sichuan_env.records.selfplay``, ``python -m sichuan_agents.arena
--records`` and
any other program writing ``sichuan-record/1`` open directly.

The deal is replayed through the engine first (:func:`sichuan_env.records.record.replay_steps`),
so the page only shows what the rules produce. One frame per decision is rendered in
Python (:func:`sichuan_env.records.svg.render_svg`) and embedded as JSON; the page needs no network
and no files besides itself: inline SVG, CSS and a little JavaScript (buttons, the arrow
keys, Home/End and a slider step through the frames). For each frame it shows the
decision, the options offered, the moves the engine made itself, the payments and wins of
that step, a running payment log, and at the last frame the settlement.

Steps are numbered as the deal's steps (0 the deal, then one per decision), the same in
every view and in a review's ``step``: a seat's view leaves out the windows that did not
ask it, so its frames skip numbers, and a frame that also shows such steps carries the
number of its first. The address ends in ``#STEP``. For tools and tests, ``#frame``
carries ``data-step`` (that number), ``data-index`` (the frame's place on the page),
``data-events`` (record indices), ``data-wall``, ``data-scores`` and ``data-current`` of
the frame shown; the SVG carries the attributes listed in :mod:`sichuan_env.records.svg`.

**A review** (:func:`render_page` with ``review=``: the JSON of ``python -m
sichuan_agents.review``, ``sichuan-review/1``) adds, beside each reviewed decision, one bar per
candidate with its estimated points and standard error, the played action and the
reviewer's preferred one marked, whether the loss is a mistake (significant) and why,
where the review says, and buttons that jump to the costliest mistakes. This
module only reads that JSON; it never imports the reviewer. In a seat's view only that
seat's reviewed decisions are shown.

Exit status: 0 written; 2 bad arguments or an unreadable file (one line on stderr); 1 a
record that does not replay.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from sichuan_env.core.state import END_NAMES, PHASE_NAMES
from sichuan_env.records.record import (
    RecordError,
    RecordMismatch,
    ReplayStep,
    iter_jsonl,
    replay,
    replay_steps,
)
from sichuan_env.records.svg import render_svg, tile_defs
from sichuan_env.seats.view import table_view, unobserved

__all__ = ["build_frames", "main", "render_page", "review_data", "write_replay"]

REASON_LABELS = {
    "hu": "Hu", "self_drawn_hu": "self-drawn Hu", "concealed_kong": "concealed kong",
    "melded_kong": "melded kong", "promoted_kong": "promoted kong",
    "kong_refund": "kong refund", "ready": "ready hand at the wall end",
    "flower_pig": "flower pig",
}


def _event_text(e: dict[str, Any], viewer: int | None, *, auto: bool) -> str:
    seat = e["seat"]
    private = viewer is not None and seat != viewer
    act = e["act"]
    if act == "void":
        if "suit" in e:
            what = f"shows an indicator card for suit {e['suit']}"
        elif private:
            what = "sets a tile aside (forbidden-suit choice)"
        else:
            what = f"sets {e['tile']} aside (forbidden-suit choice)"
    elif act == "discard":
        what = f"discards {e['tile']}" + (" (forced: the set-aside tile)" if auto else "")
    elif act == "kong":
        what = f"declares a kong of {e['tile']}" if "tile" in e else "claims a melded kong"
    elif act == "pung":
        what = "claims a pung"
    elif act == "hu":
        what = "declares Hu"
    else:
        what = "passes"
    return f"seat {seat} {what}"


def _payment_text(p: dict[str, Any]) -> str:
    to = "nobody" if p["to"] is None else f"seat {p['to']}"
    return (f"seat {p['from']} pays {to} {p['points']} "
            f"({REASON_LABELS.get(p['reason'], p['reason'])})")


def _win_text(w: dict[str, Any]) -> str:
    frm = "self-drawn" if w["from"] is None else f"from seat {w['from']}"
    fans = ", ".join(f"{name} {n}" for name, n in w["fans"].items()) or "no fans"
    return f"seat {w['seat']} wins (Hu) on {w['tile']}, {frm}: {fans}; value {w['value']}"


def build_frames(record: dict[str, Any], viewer: int | None = None) -> list[dict[str, Any]]:
    """One frame per decision (the first: the deal); with ``viewer``, one per decision
    that seat saw: a claim or rob window that did not ask it is not shown (its moves go
    into the frame of its outcome, without the other seats' passes), as it could not know
    the window was open. Raises like :func:`sichuan_env.records.record.replay` for a record that
    does not replay."""
    events = record["events"]
    frames = []
    step: ReplayStep
    held: list[ReplayStep] = []  # steps the viewer did not see, for the next frame
    first = 0  # the number of the frame's first step
    for number, step in enumerate(replay_steps(record)):
        st = step.state
        live = not bool(st.done[0])
        if not held:
            first = number
        if viewer is not None and live and unobserved(st, viewer):
            held.append(step)
            continue
        steps = [*held, step]
        held = []
        shown = [i for s in steps for i in s.events
                 if viewer is None or events[i]["seat"] == viewer or events[i]["act"] != "pass"]
        decision = None
        if shown:
            i = shown[0]
            e = events[i]
            hidden = viewer is not None and e["seat"] != viewer
            decision = {
                "event": i, "seat": e["seat"],
                "text": _event_text(e, viewer, auto=False),
                "legal": None if hidden else steps[0].legal if i == steps[0].events[0]
                else None,
                "chosen": None if hidden else _action_string(e),
            }
        tv = table_view(st, 0, viewer)
        frames.append({
            "step": first,  # the deal's step: the same number in every view (in a seat
            #                 view, the first of the steps the frame shows)
            "events": [i for s in steps for i in s.events],
            "decision": decision,
            "forced": [_event_text(events[i], viewer, auto=True) for i in shown[1:]],
            "payments": [_payment_text(p) for s in steps for p in s.payments],
            "wins": [_win_text(w) for s in steps for w in s.wins],
            "wall": int(st.wall_left[0]),
            "scores": [int(x) for x in st.scores[0]],
            "current": tv.current if live else -1,
            "phase": PHASE_NAMES[tv.phase],
            "end": None if live else END_NAMES[int(st.end_reason[0])],
            "svg": render_svg(st, 0, viewer=viewer, defs=False),
        })
    return frames


def _action_string(e: dict[str, Any]) -> str:
    if e["act"] == "void":
        return f"void {e.get('tile', e.get('suit'))}"
    if e["act"] in ("discard", "kong") and "tile" in e:
        return f"{e['act']} {e['tile']}"
    return e["act"]


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:16px;color:#222;
background:#fafaf7}
h1{font-size:18px;margin:0 0 4px}.sub{color:#555;font-size:13px;margin-bottom:10px}
.controls{display:flex;gap:6px;align-items:center;margin:8px 0;flex-wrap:wrap}
.controls button{font-size:15px;padding:4px 10px;border:1px solid #aaa;border-radius:5px;
background:#fff;cursor:pointer}.controls button:disabled{opacity:.4;cursor:default}
#slider{flex:1;min-width:240px}#pos{font-variant-numeric:tabular-nums;min-width:150px}
.main{display:flex;gap:16px;align-items:flex-start}
#frame{flex:1 1 auto;min-width:420px;max-width:900px}#table svg{width:100%;height:auto}
.side{flex:0 0 330px;font-size:13px}.side h2{font-size:14px;margin:12px 0 4px}
.box{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px}
.opt{display:inline-block;border:1px solid #bbb;border-radius:4px;padding:1px 5px;margin:2px;
font-family:ui-monospace,monospace;font-size:12px}.opt.chosen{background:#ffe08a;
border-color:#c99700;font-weight:bold}
ul{margin:2px 0;padding-left:18px}li.now{font-weight:bold}li.later{display:none}
#log{max-height:260px;overflow:auto}.muted{color:#777}
table.settle{border-collapse:collapse}table.settle td,table.settle th{padding:2px 8px;
border-bottom:1px solid #eee;text-align:right}table.settle th{white-space:nowrap}
table.settle th:first-child{text-align:left}
.keys{color:#777;font-size:12px}
#review-summary{margin:6px 0;font-size:13px}#costliest button{font-size:12px;margin:2px;
padding:2px 6px;border:1px solid #c77;border-radius:4px;background:#fff4f2;cursor:pointer}
.cand{margin:3px 0;font-family:ui-monospace,monospace;font-size:12px}
.cand .lab{display:flex;justify-content:space-between;gap:6px}
.cand .track{position:relative;height:10px;background:#eee;border-radius:2px}
.cand .fill{position:absolute;top:0;bottom:0;left:0;background:#8fb3d9;border-radius:2px}
.cand.preferred .fill{background:#4c9a52}.cand.played .lab{font-weight:bold}
.cand .err{position:absolute;top:4px;height:2px;background:#333}
.cand .zero{position:absolute;top:-2px;bottom:-2px;width:1px;background:#999}
.mark{font-size:11px;border-radius:3px;padding:0 3px;margin-left:3px}
.mark.played{background:#ffe08a}.mark.preferred{background:#cfe8c8}.mark.best{background:#dde}
#review-loss{margin-bottom:4px}
"""

_JS = """
(function(){
  const frames = JSON.parse(document.getElementById('frames').textContent);
  const log = JSON.parse(document.getElementById('paylog').textContent);
  const last = frames.length - 1;
  const frameAt = n => { let i = 0; while (i < last && frames[i + 1].step <= n) i++; return i; };
  const reviewEl = document.getElementById('review-data');
  const review = reviewEl ? JSON.parse(reviewEl.textContent) : null;
  function fmt(x) { return (x >= 0 ? '+' : '') + x.toFixed(2); }
  function showReview(r) {
    const box = document.getElementById('review'); box.textContent = '';
    box.dataset.event = r ? r.event : '';
    if (!r) { box.className = 'muted'; box.textContent = 'no reviewed decision at this step';
      return; }
    box.className = '';
    const head = document.createElement('div'); head.id = 'review-loss';
    head.textContent = 'played ' + r.played + '; reviewer: ' + r.reviewer + '; estimated loss ' +
      r.loss.toFixed(2) + ' \u00b1 ' + r.loss_se.toFixed(2) + ' (' + r.samples + ' samples)' +
      (r.mistake ? ': a mistake' : (r.loss > 0 ? ': within the noise' : ''));
    box.appendChild(head);
    box.dataset.loss = r.loss; box.dataset.mistake = r.mistake ? '1' : '0';
    if (r.why) { const why = document.createElement('div'); why.id = 'review-why';
      why.textContent = 'why: ' + r.why; box.appendChild(why); }
    const lo = Math.min(0, ...r.candidates.map(c => c.mean - c.se));
    const hi = Math.max(0, ...r.candidates.map(c => c.mean + c.se));
    const span = (hi - lo) || 1;
    const at = x => (100 * (x - lo) / span).toFixed(2) + '%';
    r.candidates.forEach(c => {
      const row = document.createElement('div');
      const played = c.action === r.played, pref = c.action === r.reviewer;
      row.className = 'cand' + (played ? ' played' : '') + (pref ? ' preferred' : '');
      row.dataset.action = c.action; row.dataset.mean = c.mean; row.dataset.se = c.se;
      const lab = document.createElement('div'); lab.className = 'lab';
      const name = document.createElement('span'); name.textContent = c.action;
      [[played, 'played'], [pref, 'preferred'], [c.action === r.best, 'best']].forEach(m => {
        if (!m[0]) return; const t = document.createElement('span');
        t.className = 'mark ' + m[1]; t.textContent = m[1]; name.appendChild(t); });
      const val = document.createElement('span');
      val.textContent = fmt(c.mean) + ' \u00b1 ' + c.se.toFixed(2);
      lab.append(name, val);
      const track = document.createElement('div'); track.className = 'track';
      const fill = document.createElement('div'); fill.className = 'fill';
      fill.style.width = at(c.mean);
      const err = document.createElement('div'); err.className = 'err';
      err.style.left = at(c.mean - c.se);
      err.style.width = (100 * 2 * c.se / span).toFixed(2) + '%';
      const zero = document.createElement('div'); zero.className = 'zero'; zero.style.left = at(0);
      track.append(fill, zero, err);
      row.append(lab, track); box.appendChild(row);
    });
  }
  const $ = id => document.getElementById(id);
  const slider = $('slider');
  slider.max = last;
  const logList = $('log');
  log.forEach(entry => {
    const li = document.createElement('li');
    li.textContent = 'step ' + entry.step + ': ' + entry.text;
    li.dataset.step = entry.step;
    logList.appendChild(li);
  });
  function list(el, items, empty) {
    el.textContent = '';
    if (!items.length) { const li = document.createElement('li'); li.className = 'muted';
      li.textContent = empty; el.appendChild(li); return; }
    items.forEach(t => { const li = document.createElement('li'); li.textContent = t;
      el.appendChild(li); });
  }
  let k = 0;
  function show(n) {
    k = Math.max(0, Math.min(last, n));
    const f = frames[k];
    $('table').innerHTML = f.svg;
    const fr = $('frame');
    fr.dataset.step = f.step; fr.dataset.index = k; fr.dataset.events = f.events.join(',');
    fr.dataset.wall = f.wall; fr.dataset.scores = f.scores.join(',');
    fr.dataset.current = f.current;
    slider.value = k;
    $('pos').textContent = 'step ' + f.step + ' / ' + frames[last].step +
      (f.events.length ? '  (event ' + f.events[0] +
        (f.events.length > 1 ? '-' + f.events[f.events.length - 1] : '') + ')' : '  (the deal)');
    $('first').disabled = $('prev').disabled = k === 0;
    $('next').disabled = $('last').disabled = k === last;
    const d = f.decision;
    $('decision').textContent = d ? d.text : 'The deal: nobody has decided yet.';
    const opts = $('options'); opts.textContent = '';
    if (d && d.legal) {
      d.legal.forEach(o => { const s = document.createElement('span');
        s.className = 'opt' + (o === d.chosen ? ' chosen' : ''); s.textContent = o;
        opts.appendChild(s); });
    } else if (d) { opts.textContent = 'options hidden in this seat view'; }
    if (review) showReview(f.events.map(i => review.byEvent[i]).find(r => r) || null);
    list($('forced'), f.forced, 'none');
    list($('pays'), f.payments.concat(f.wins), 'none');
    logList.querySelectorAll('li').forEach(li => {
      const s = +li.dataset.step;
      li.className = s > f.step ? 'later' : (s === f.step ? 'now' : '');
    });
    $('settlement').hidden = k !== last;
    $('pending').hidden = k === last;
    if (location.hash !== '#' + f.step) history.replaceState(null, '', '#' + f.step);
  }
  $('first').onclick = () => show(0);
  $('prev').onclick = () => show(k - 1);
  $('next').onclick = () => show(k + 1);
  $('last').onclick = () => show(last);
  slider.addEventListener('input', () => show(+slider.value));
  document.addEventListener('keydown', ev => {
    if (ev.target === slider) return;  // the slider moves itself
    if (ev.key === 'ArrowRight' || ev.key === 'ArrowDown') { show(k + 1); ev.preventDefault(); }
    else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowUp') { show(k - 1); ev.preventDefault(); }
    else if (ev.key === 'Home') { show(0); ev.preventDefault(); }
    else if (ev.key === 'End') { show(last); ev.preventDefault(); }
  });
  if (review) {
    review.costliest.forEach(c => { const b = document.createElement('button');
      const i = frames.findIndex(f => f.events.includes(c.event));
      b.textContent = 'step ' + frames[i].step + ': ' + c.played + ' (-' + c.loss.toFixed(2) + ')';
      b.dataset.step = frames[i].step; b.dataset.event = c.event; b.onclick = () => show(i);
      $('costliest').appendChild(b); });
  }
  const start = parseInt((location.hash || '#0').slice(1), 10);
  show(isNaN(start) ? 0 : frameAt(start));
})();
"""


def _json_script(element_id: str, value: Any) -> str:
    text = json.dumps(value, separators=(",", ":")).replace("</", "<\\/")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def review_data(review: dict[str, Any], viewer: int | None = None) -> dict[str, Any]:
    """What the page needs of a review (``sichuan-review/1``): the reviewed decisions by
    event index, the costliest ones and a summary line per seat; in a seat's view, that
    seat's decisions only. ``ValueError`` for data that is not a review."""
    if not isinstance(review, dict) or not isinstance(review.get("decisions"), list):
        raise ValueError("review data must be a sichuan-review/1 object with 'decisions'")
    decisions = [d for d in review["decisions"] if viewer is None or d["seat"] == viewer]
    flagged = (d for d in decisions if d.get("mistake", d["loss"] > 0))  # older files: loss
    worst = sorted(flagged, key=lambda d: -d["loss"])[:5]
    lines = []
    for seat in sorted({d["seat"] for d in decisions}):
        mine = [d for d in decisions if d["seat"] == seat]
        loss = sum(d["loss"] for d in mine)
        agree = sum(d["played"] == d["reviewer"] for d in mine) / len(mine)
        wrong = sum(bool(d.get("mistake")) for d in mine)
        lines.append(f"seat {seat}: {len(mine)} decisions reviewed, estimated loss "
                     f"{loss:.2f} points ({loss / len(mine):.3f} per decision), {wrong} "
                     f"mistake{'s' * (wrong != 1)}, agreement with the reviewer "
                     f"{100 * agree:.0f}%")
    est = review.get("estimator", {})
    who = (f"Reviewer: {review.get('reviewer', '?')}, {est.get('k', '?')} samples per "
           f"decision, {est.get('rollout', '?')} play-outs")
    return {"byEvent": {str(d["event"]): d for d in decisions},
            "costliest": [{"event": d["event"], "played": d["played"], "loss": d["loss"]}
                          for d in worst],
            "lines": [who] + lines}


def render_page(record: dict[str, Any], frames: list[dict[str, Any]], *,
                viewer: int | None = None, title: str = "",
                review: dict[str, Any] | None = None) -> str:
    """The HTML page for ``frames`` of ``record`` (from :func:`build_frames`), with the
    review beside each reviewed decision when ``review`` (``sichuan-review/1``) is given."""
    mine = replay(record)
    paylog = [{"step": f["step"], "text": t} for f in frames for t in f["payments"] + f["wins"]]
    rules = record["rules"]
    agents = record.get("arena", {}).get("agents") if isinstance(record.get("arena"),
                                                                  dict) else None
    sub = [f"rules {rules.get('preset', '?')} (fan cap {rules.get('fan_cap')}, "
           f"{'strict' if rules.get('strict_void') else 'free'} void discards)",
           f"seed {record.get('seed')}", f"dealer seat {record['dealer']}",
           f"{len(record['events'])} events, {len(frames) - 1} decisions",
           "view: " + ("every hand" if viewer is None else f"seat {viewer}")]
    if isinstance(agents, list) and len(agents) == 4:
        sub.append("players: " + ", ".join(f"seat {s} {a}" for s, a in enumerate(agents)))
    rows = []
    pay_by_seat = [[0] * 4 for _ in range(4)]  # [seat][0 received, 1 paid]
    for p in mine["payments"]:
        pay_by_seat[p["from"]][1] += p["points"]
        if p["to"] is not None:
            pay_by_seat[p["to"]][0] += p["points"]
    for seat in range(4):
        won = [w for w in mine["wins"] if w["seat"] == seat]
        hu = "; ".join(f"Hu on {w['tile']} ({w['value']})" for w in won) or "-"
        rows.append(f"<tr><th>seat {seat}</th><td>{pay_by_seat[seat][0]}</td>"
                    f"<td>{pay_by_seat[seat][1]}</td><td><b>{mine['scores'][seat]:+d}</b></td>"
                    f"<td style='text-align:left'>{html.escape(hu)}</td></tr>")
    settlement = (
        f"<p>End: <b>{html.escape(mine['end'].replace('_', ' '))}</b>; next dealer: seat "
        f"{mine['next_dealer']}.</p><table class='settle' id='settle-table' "
        f"data-scores='{','.join(str(s) for s in mine['scores'])}'><tr><th>seat</th>"
        "<th>received</th><th>paid</th><th>score</th><th>Hu</th></tr>" + "".join(rows)
        + "</table>"
    )
    name = html.escape(title or "sichuan-record/1 replay")
    review_html = review_json = ""
    if review is not None:
        data = review_data(review, viewer)
        review_html = (
            "<h2>Review</h2><div class='box' id='review-box'><div id='review-summary'>"
            + "<br>".join(html.escape(x) for x in data["lines"])
            + "</div><div>Costliest decisions: <span id='costliest'>"
            + ("" if data["costliest"] else "none")
            + "</span></div><div id='review'></div></div>")
        review_json = _json_script("review-data", data)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{name}</title><style>{_CSS}</style></head>
<body>
{tile_defs()}
<h1>{name}</h1>
<div class="sub">{html.escape(" · ".join(sub))}</div>
<div class="controls">
<button id="first" title="first step (Home)">&laquo; first</button>
<button id="prev" title="previous step (Left arrow)">&#x25C0; prev</button>
<button id="next" title="next step (Right arrow)">next &#x25B6;</button>
<button id="last" title="last step (End)">last &raquo;</button>
<input type="range" id="slider" min="0" max="0" value="0" aria-label="timeline">
<span id="pos"></span>
</div>
<div class="keys">Keys: &larr; / &rarr; step, Home / End jump; the address ends in #step.</div>
<div class="main">
<div id="frame" data-step="0"><div id="table"></div></div>
<div class="side">
<h2>Decision</h2><div class="box"><div id="decision"></div>
<div id="options"></div></div>
{review_html}
<h2>Moves the engine made itself</h2><div class="box"><ul id="forced"></ul></div>
<h2>Payments and wins this step</h2><div class="box"><ul id="pays"></ul></div>
<h2>Payment log</h2><div class="box"><ul id="log"></ul></div>
<h2>Settlement</h2><div class="box"><div id="settlement" hidden>{settlement}</div>
<div id="pending" class="muted">Shown at the last step.</div></div>
</div></div>
{_json_script("frames", frames)}
{_json_script("paylog", paylog)}
{review_json}
<script>{_JS}</script>
</body></html>
"""


def write_replay(record: dict[str, Any], out: str | Path, *, viewer: int | None = None,
                 title: str = "", review: dict[str, Any] | None = None) -> int:
    """Replay ``record`` and write its viewer page to ``out`` (with ``review``, see
    :func:`render_page`); returns the size in bytes."""
    frames = build_frames(record, viewer)
    page = render_page(record, frames, viewer=viewer, title=title, review=review)
    data = page.encode("utf-8")
    Path(out).write_bytes(data)
    return len(data)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def _fail(message: str, status: int = 2) -> int:
    print(f"python -m sichuan_env.records.viewer: error: {message}", file=sys.stderr)
    return status


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python -m sichuan_env.records.viewer",
                     description="Write one deal of a records file as a self-contained HTML "
                                 "replay page.")
    parser.add_argument("records", help="a JSONL file of sichuan-record/1 records")
    parser.add_argument("--deal", type=int, default=0, metavar="N",
                        help="the record on the N-th non-blank line, from 0 (default 0)")
    parser.add_argument("--seat", type=int, default=None, metavar="S",
                        help="show the table as seat S (0-3) sees it; default: every hand")
    parser.add_argument("--out", required=True, help="the HTML file to write")
    parser.add_argument("--review", default=None, metavar="REVIEW.json",
                        help="show a review of this deal "
                             "(the JSON of python -m sichuan_agents.review)")
    args = parser.parse_args(argv)
    if args.deal < 0:
        return _fail(f"--deal must be 0 or more, got {args.deal}")
    if args.seat is not None and not 0 <= args.seat <= 3:
        return _fail(f"--seat must be a seat 0-3, got {args.seat}")
    out = Path(args.out)
    folder = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        return _fail(f"--out {args.out} is a folder; give a file name such as replay.html")
    if not folder.is_dir():
        return _fail(f"the output folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        return _fail(f"the output folder {folder} is not writable")
    src = Path(args.records)
    if not src.is_file():
        return _fail(f"no such records file: {args.records}")
    record = None
    count = 0
    try:
        for n, (_, rec) in enumerate(iter_jsonl(src)):
            count = n + 1
            if n == args.deal:
                record = rec
                break
    except OSError as err:
        return _fail(f"cannot read {args.records}: {err.strerror or err}")
    if isinstance(record, RecordError):
        return _fail(f"{args.records}: record {args.deal}: {record}", 1)
    if record is None:
        return _fail(f"{args.records} holds {count} record(s); --deal {args.deal} is past "
                     f"the end (the first is --deal 0)")
    title = f"{src.name}, record {args.deal}"
    review = None
    if args.review is not None:
        try:
            review = json.loads(Path(args.review).read_text(encoding="utf-8"))
            review_data(review, args.seat)
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
            return _fail(f"--review {args.review}: not a readable review: "
                         f"{getattr(err, 'strerror', None) or err}")
        if review.get("deal", args.deal) != args.deal or "deals" in review:
            return _fail(f"--review {args.review} is not the review of record {args.deal}")
    try:
        size = write_replay(record, out, viewer=args.seat, title=title, review=review)
    except (RecordError, RecordMismatch) as err:
        return _fail(f"{args.records}: record {args.deal} does not replay: "
                     f"{type(err).__name__}: {err}", 1)
    except OSError as err:
        return _fail(f"cannot write {args.out}: {err.strerror or err}")
    print(f"wrote {args.out} ({size / 1024:.0f} KiB, {title})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
