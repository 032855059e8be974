// The play page: draws the table the server sends (GET /api/state), sends the human's
// moves (POST /api/act) and shows the bots' moves one frame at a time. ?speed=MS sets
// the pause between frames (default 400; 0 shows them at once).
(function () {
  'use strict';
  const $ = id => document.getElementById(id);
  const SVG = 'http://www.w3.org/2000/svg';
  const params = new URLSearchParams(location.search);
  const speed = Math.max(0, parseInt(params.get('speed') || '400', 10) || 0);
  const MELD = {pung: 'pung', concealed_kong: 'concealed kong', melded_kong: 'kong',
                promoted_kong: 'promoted kong', postponed_kong: 'postponed kong'};
  const SUIT = {m: 'characters (m)', p: 'dots (p)', s: 'bamboo (s)'};
  let state = null;
  let busy = false;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function tile(name) {
    const s = document.createElementNS(SVG, 'svg');
    s.setAttribute('class', 'tile');
    s.setAttribute('viewBox', '0 0 28 38');
    s.dataset.tile = name;
    const u = document.createElementNS(SVG, 'use');
    u.setAttribute('href', '#sich-' + name);
    s.appendChild(u);
    if (name !== 'back') {
      const t = document.createElementNS(SVG, 'title');
      t.textContent = name;
      s.appendChild(t);
    }
    return s;
  }
  function showError(msg) {
    const e = $('error');
    e.textContent = msg || '';
    e.hidden = !msg;
  }

  async function call(method, url, body) {
    const opts = {method, headers: {}};
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    const r = await fetch(url, opts);
    let data = null;
    try { data = await r.json(); } catch (err) { data = {error: 'bad reply: ' + err}; }
    if (!r.ok) throw new Error(data.error || ('HTTP ' + r.status));
    return data;
  }

  function seatHead(s, t) {
    const head = el('div', 'seat-head');
    head.appendChild(el('span', 'who', s.you ? 'You (seat ' + s.seat + ')'
                                        : 'Seat ' + s.seat + ': ' + s.name));
    head.appendChild(el('span', 'wind', s.wind + (s.seat === t.dealer ? ' · dealer' : '')));
    head.appendChild(el('span', 'void', 'void ' + (s.void ? s.void : '?')));
    const sc = el('span', 'score' + (s.score > 0 ? ' pos' : s.score < 0 ? ' neg' : ''),
                  'score ' + (s.score > 0 ? '+' : '') + s.score);
    sc.dataset.score = s.score;
    head.appendChild(sc);
    if (s.hu) {
      head.appendChild(el('span', 'hu', 'HU' + (s.hu_tile ? ' on ' + s.hu_tile : ' (self-drawn)')));
    }
    return head;
  }
  function meldsRow(s) {
    const row = el('div', 'row melds');
    if (s.melds.length) row.appendChild(el('span', 'label', 'melds'));
    s.melds.forEach(m => {
      const g = el('span', 'meld');
      g.title = MELD[m.meld] || m.meld;
      g.dataset.meld = m.meld;
      const n = m.meld === 'pung' ? 3 : 4;
      for (let i = 0; i < n; i++) g.appendChild(tile(m.tile));
      row.appendChild(g);
    });
    return row;
  }
  function riverRow(s) {
    const row = el('div', 'row river');
    row.dataset.river = s.river.join(' ');
    row.appendChild(el('span', 'label', 'discards'));
    s.river.forEach(k => row.appendChild(tile(k)));
    return row;
  }

  function drawSeat(s, t) {
    const box = el('div', 'seat' + (t.active === s.seat && t.phase !== 'done' ? ' to-act' : '')
                         + (s.hu ? ' won' : ''));
    box.dataset.seat = s.seat;
    box.appendChild(seatHead(s, t));
    const hand = el('div', 'row hand');
    hand.dataset.count = s.standing;
    for (let i = 0; i < s.standing; i++) hand.appendChild(tile('back'));
    hand.appendChild(meldsRow(s));
    box.appendChild(hand);
    box.appendChild(riverRow(s));
    return box;
  }

  function drawMe(t, legal) {
    const s = t.seats[t.you];
    const box = el('div', 'seat' + (t.active === s.seat && t.phase !== 'done' ? ' to-act' : '')
                         + (s.hu ? ' won' : ''));
    box.dataset.seat = s.seat;
    box.appendChild(seatHead(s, t));
    const hand = el('div', 'row hand');
    hand.dataset.hand = t.hand.join(' ');
    if (![...legal].some(a => /^(discard|void) [1-9][mps]$/.test(a))) hand.classList.add('idle');
    const verb = t.phase === 'void' ? 'void ' : 'discard ';
    const names = t.hand.slice();
    if (t.drawn) names.splice(names.indexOf(t.drawn), 1);
    const add = (k, cls) => {
      const b = el('button', cls);
      b.type = 'button';
      b.dataset.action = verb + k;
      b.disabled = busy || !legal.has(verb + k);
      b.title = verb + k;
      b.appendChild(tile(k));
      b.onclick = () => act(verb + k);
      hand.appendChild(b);
    };
    names.forEach(k => add(k, ''));
    if (t.drawn) add(t.drawn, 'drawn');
    if (t.aside) {
      hand.appendChild(el('span', 'label', 'set aside'));
      hand.appendChild(tile(t.aside));
    }
    box.appendChild(hand);
    box.appendChild(meldsRow(s));
    box.appendChild(riverRow(s));
    return box;
  }

  function buttonLabel(a) {
    if (a.startsWith('void ')) return 'Void ' + (SUIT[a.slice(5)] || a.slice(5));
    if (a.startsWith('kong ')) return 'Kong ' + a.slice(5);
    return {pung: 'Pung', kong: 'Kong', hu: 'Hu!', pass: 'Pass'}[a] || a;
  }

  function draw(t, interactive) {
    const legal = new Set(interactive ? t.legal : []);
    const others = $('others');
    others.textContent = '';
    for (let r = 1; r <= 3; r++) others.appendChild(drawSeat(t.seats[(t.you + r) % 4], t));
    const me = $('me');
    me.textContent = '';
    me.appendChild(drawMe(t, legal));
    const claim = $('claim');
    claim.textContent = '';
    if (t.claim_tile) {
      $('claim-label').textContent = (t.phase === 'rob' ? 'Kong tile of seat ' : 'Discard of seat ')
        + t.active + ':';
      claim.appendChild(tile(t.claim_tile));
    } else {
      $('claim-label').textContent = '';
    }
    const acts = $('actions');
    acts.textContent = '';
    [...legal].filter(a => !/^(discard|void) [1-9][mps]$/.test(a)).sort().forEach(a => {
      const b = el('button', a === 'hu' ? 'hu' : '', buttonLabel(a));
      b.type = 'button';
      b.dataset.action = a;
      b.disabled = busy;
      b.onclick = () => act(a);
      acts.appendChild(b);
    });
    let prompt = '';
    if (interactive && legal.size) {
      if (t.phase === 'void') prompt = 'Choose your forbidden suit: click a tile to set it aside'
        + (acts.childElementCount ? ', or show an indicator for a suit you do not hold.' : '.');
      else if (t.phase === 'claim' || t.phase === 'rob') prompt = 'Claim the tile or pass.';
      else prompt = 'Your turn: click a tile to discard it.';
    }
    $('prompt').textContent = prompt;
    const who = t.phase === 'done' ? 'the deal is over'
      : legal.size ? 'your move' : 'seat ' + t.active + ' playing';
    $('status').textContent = 'Seat ' + t.you + ' · rules ' + (state ? state.rules : '') +
      ' · deal ' + (state ? state.deal + 1 : 1) + ' · ' + t.phase + ' · wall ' + t.wall +
      ' · ' + who;
  }

  function drawLog(log, fresh) {
    const ol = $('log');
    ol.textContent = '';
    log.forEach((line, i) => ol.appendChild(el('li', i >= log.length - fresh ? 'new' : '', line)));
    ol.scrollTop = ol.scrollHeight;
  }

  function drawSettlement(st) {
    const box = $('settlement');
    const s = st.settlement;
    box.hidden = !s;
    $('record-link').hidden = !s;
    $('replay-link').hidden = !s;
    showReview(s ? reviewOf(st.deal) : null);
    box.textContent = '';
    if (!s) return;
    box.appendChild(el('h2', '', 'Settlement: ' + s.end.replace('_', ' ')));
    const tab = el('table');
    tab.id = 'settle-table';
    tab.dataset.scores = s.scores.join(',');
    const head = el('tr');
    ['seat', 'player', 'Hu', 'score'].forEach(h => head.appendChild(el('th', '', h)));
    tab.appendChild(head);
    st.table.seats.forEach(seat => {
      const tr = el('tr');
      const wins = s.wins.filter(w => w.seat === seat.seat).map(w =>
        (w.tile ? 'on ' + w.tile : 'self-drawn') + (w.from === null ? '' : ' from seat ' + w.from) +
        ' (' + w.value + (w.fans ? '; ' + (Object.keys(w.fans).join(', ') || 'no fans') : '') + ')');
      tr.appendChild(el('th', '', String(seat.seat)));
      tr.appendChild(el('td', '', seat.name));
      tr.appendChild(el('td', 'wins', wins.join('; ') || '-'));
      const v = s.scores[seat.seat];
      tr.appendChild(el('td', 'score' + (v > 0 ? ' pos' : v < 0 ? ' neg' : ''), (v > 0 ? '+' : '') + v));
      tab.appendChild(tr);
    });
    box.appendChild(tab);
    const you = s.scores[st.table.you];
    // the seed comes as a decimal string: 64 bits, more than a number holds exactly
    const result = el('p', 'you-result', 'You ' + (you > 0 ? 'won ' + you : you < 0 ? 'lost ' + -you
      : 'broke even') + ' (seed ' + String(s.seed) + ').');
    result.dataset.seed = String(s.seed);
    box.appendChild(result);
    const ul = el('ul', 'payments');
    s.payments.forEach(p => ul.appendChild(el('li', '', p)));
    box.appendChild(ul);
  }

  function finish(st) {
    state = st;
    busy = false;
    const g = $('game');
    g.dataset.step = st.step;
    g.dataset.phase = st.table.phase;
    g.dataset.done = st.done ? '1' : '0';
    g.dataset.deal = st.deal;
    draw(st.table, true);
    drawSettlement(st);
    const notice = $('notice');  // a bot failed or ran out of time: who played for it
    notice.textContent = (st.notices || []).join(' ');
    notice.hidden = !notice.textContent;
    g.dataset.ready = '1';
  }

  async function show(st) {
    // the bots' moves one frame at a time, then the table to act on
    const g = $('game');
    g.dataset.ready = '0';
    busy = true;
    const base = st.log.length - st.frames.reduce((n, f) => n + f.moves.length, 0);
    let shown = base;
    for (const f of st.frames) {
      if (!speed) break;
      shown += f.moves.length;
      draw(f.table, false);
      drawLog(st.log.slice(0, shown), f.moves.length);
      await new Promise(res => setTimeout(res, speed));
    }
    drawLog(st.log, st.log.length - base);
    finish(st);
  }

  async function act(action) {
    if (busy || !state) return;
    busy = true;
    showError('');
    $('game').dataset.ready = '0';
    try {
      await show(await call('POST', '/api/act', {deal: state.deal, step: state.step, action}));
    } catch (err) {
      showError(err.message);
      busy = false;
      try {
        const st = await call('GET', '/api/state');
        drawLog(st.log, 0);
        finish(st);
      } catch (e2) { showError(e2.message); }
    }
  }

  async function newDeal() {
    if (busy) return;
    if (state && !state.done && !window.confirm('Leave this deal and deal a new one?')) return;
    busy = true;
    showError('');
    $('game').dataset.ready = '0';
    try {
      await show(await call('POST', '/api/new', {}));
    } catch (err) {
      showError(err.message);
      busy = false;
    }
  }

  // "Review this deal": the server reviews the human seat's decisions in the background;
  // the page polls its progress and opens the reviewed replay when it is done
  let review = null;  // {deal, status, done, total}
  let reviewTimer = null;
  function reviewOf(deal) { return review && review.deal === deal ? review : {status: 'none'}; }
  function showReview(r) {
    const button = $('review-button'), status = $('review-status'), link = $('review-link');
    button.hidden = !r || r.status !== 'none' && r.status !== 'failed';
    status.hidden = !r || r.status === 'none';
    link.hidden = !r || r.status !== 'done';
    if (!r) return;
    status.dataset.status = r.status;
    status.textContent = r.status === 'queued' ? 'Review waiting for its turn...'
      : r.status === 'running' ? 'Reviewing your decisions: ' + r.done + ' / ' + (r.total ?? '?')
      : r.status === 'done' ? 'Review ready (' + r.total + ' decisions)'
      : r.status === 'failed' ? 'The review failed: ' + (r.error || 'try again') : '';
  }
  async function pollReview(openWhenDone) {
    clearTimeout(reviewTimer);
    try {
      review = await call('GET', '/api/review');
    } catch (err) { showError(err.message); return; }
    if (!state || review.deal !== state.deal) return;
    showReview(review);
    if (review.status === 'queued' || review.status === 'running') {
      reviewTimer = setTimeout(() => pollReview(openWhenDone), 1000);
    } else if (review.status === 'done' && openWhenDone) {
      window.open('/review', '_blank');
    }
  }
  async function startReview() {
    showError('');
    try {
      review = await call('POST', '/api/review', {});
      showReview(review);
      if (review.status === 'done') window.open('/review', '_blank');
      else reviewTimer = setTimeout(() => pollReview(true), 1000);
    } catch (err) { showError(err.message); }
  }
  $('review-button').onclick = startReview;

  $('new-deal').onclick = newDeal;
  (async () => {
    try {
      const st = await call('GET', '/api/state');
      drawLog(st.log, 0);
      finish(st);
      if (st.done) pollReview(false);  // a review asked for before a reload
    } catch (err) {
      newDeal();
    }
  })();
})();
