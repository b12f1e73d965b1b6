// ply in the browser: the live list, a match to watch or play, a new match, and the replay of a
// finished one. Talks only to the ply-web that served it (/api/...). Text from the network is
// only ever put into the page as text (no innerHTML), and a seat's token lives in this browser's
// localStorage alone: it goes out only in the Authorization header of this seat's own moves.
import { drawBoard, changedCells, setLooks, lookOf, cellName, winningCells, closedMill } from './board.js';

// ---- small helpers ------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
}

// `token`: a seat's token; `player`: send this browser's player key (or this key, a string) (calls that act as the
// player: logging in, creating, joining, pairing). Either goes only in the Authorization header.
async function api(path, { method = 'GET', body, token, player = false, keepalive = false } = {}) {
  const headers = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  else if (typeof player === 'string') headers.Authorization = `Player ${player}`;
  else if (player && me.get()) headers.Authorization = `Player ${me.get().key}`;
  const res = await fetch(path, { method, headers, keepalive, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = {};
  try { data = await res.json(); } catch { /* an empty or non-JSON answer */ }
  if (!res.ok) throw Object.assign(new Error(data.error || `the server answered ${res.status}`), { status: res.status });
  return data;
}

// A refusal that asking again will not change (no such match, a bad or foreign token), as
// opposed to a lost connection, an overloaded gateway (429, 503) or a timeout (408).
const refusedForGood = (e) => e.status >= 400 && e.status < 500 && e.status !== 408 && e.status !== 429;

// Seats are counted from 1 wherever people read them; the API counts from 0.
const seatLabel = (i) => `seat ${i + 1}`;

const seats = {
  key: (id) => `ply.seat.${id}`,
  get(id) {
    try {
      const s = JSON.parse(localStorage.getItem(this.key(id)) || 'null');
      return s && typeof s.token === 'string' && Number.isInteger(s.seat) ? s : null;
    } catch { return null; }
  },
  put(id, seat, token) { localStorage.setItem(this.key(id), JSON.stringify({ seat, token })); },
};

// The player this browser is logged in as ({name, key}), or null: a guest. The key is the
// player's password: kept in this browser's localStorage, sent only in the Authorization header.
const me = {
  key: 'ply.player',
  get() {
    try {
      const p = JSON.parse(localStorage.getItem(this.key) || 'null');
      return p && typeof p.name === 'string' && typeof p.key === 'string' ? p : null;
    } catch { return null; }
  },
  put(name, key) { localStorage.setItem(this.key, JSON.stringify({ name, key })); showMe(); },
  clear() { localStorage.removeItem(this.key); showMe(); },
};

// The header's corner: who this browser plays as.
function showMe() {
  const box = document.getElementById('me');
  if (!box) return;
  const p = me.get();
  box.replaceChildren(p ? h('a', { href: `#/p/${encodeURIComponent(p.name)}`, id: 'me-name' }, p.name)
    : h('a', { href: '#/login', id: 'me-login' }, 'Log in'));
}

// "1532" or "1532?" while provisional (few games, a wide deviation); "" without a rating.
function ratingText(rating, provisional) {
  return rating > 0 ? `${rating}${provisional ? '?' : ''}` : '';
}

// A player's name as a link to their page (bots too); a guest's as text.
function playerLink(name, text) {
  return name ? h('a', { href: `#/p/${encodeURIComponent(name)}`, class: 'player' }, text || name) : h('span', {}, text || '');
}

let gamesCache = null;
let gamesLoading = null;
// The games, asked once per page load (however many callers want them meanwhile).
function games() {
  if (gamesCache) return Promise.resolve(gamesCache);
  if (!gamesLoading) {
    gamesLoading = api('/api/games').then((out) => (gamesCache = out.games))
      .finally(() => { gamesLoading = null; });
  }
  return gamesLoading;
}
const gameTitle = (name) => (gamesCache || []).find((g) => g.name === name)?.title || name;

function formatClock(ms) {
  ms = Math.max(0, ms);
  const s = Math.floor(ms / 1000);
  const m = Math.floor(s / 60);
  if (ms < 10000) return `0:0${Math.floor(ms / 1000)}.${Math.floor((ms % 1000) / 100)}`;
  return `${m}:${String(s % 60).padStart(2, '0')}`;
}

function counted(n, one, many) { return `${n} ${n === 1 ? one : many}`; }

function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' }[n % 10] || 'th');
  return `${n}${suffix}`;
}

// An analysis's progress in words, as the terminal client says it.
function progressText(p) {
  if (p.waiting) return 'waiting for the analysis another request started...';
  if (p.queue_position > 0) {
    return `waiting for a turn: ${ordinal(p.queue_position)} in line (${counted(p.running, 'analysis', 'analyses')} running on this lobby)`;
  }
  const pct = p.positions > 0 ? Math.floor((100 * p.positions_done) / p.positions) : 0;
  return `analysing: ${p.positions_done} of ${p.positions} positions (${pct}%)` +
    (p.bots_busy ? " (the bots are busy with people's moves: waiting)" : '');
}

// A bot's score text ("+35", "win in 3", "loss in 5", "draw", "win by 6") from the first
// seat's side: a forced result names the side it favours.
function firstSeatScore(m, st) {
  const text = m.bot.score_text || '';
  const side = (seat) => st.seats[seat]?.side || seatLabel(seat);
  const other = m.seat === 0 ? 1 : 0;
  const forced = /^(win|loss) (in|by) (.+)$/.exec(text);
  if (forced) {
    const winner = forced[1] === 'win' ? m.seat : other;
    return `${side(winner)} wins ${forced[2]} ${forced[3]}`;
  }
  if (!/^[+-]?\d+$/.test(text)) return text || '?';
  const score = m.seat === 0 ? Number(text) : -Number(text);
  return score > 0 ? `+${score}` : `${score}`;
}

// What a bot saw when it chose a move, in one line.
function botSummary(m, st) {
  if (m.bot.depth === 0 && !m.bot.nodes) return 'random move';
  return `depth ${m.bot.depth} · ${firstSeatScore(m, st)} · ${formatCount(m.bot.nodes)} nodes`;
}

function formatCount(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

function sideGlyph(game, index) {
  const code = String(index + 1);
  const svg = drawBoard(game, { rows: [code] }, { small: true });
  svg.setAttribute('class', 'glyph');
  svg.setAttribute('aria-hidden', 'true');
  return svg;
}

// The lobby's analysis of match `id`, over server-sent events: `progress` gets each progress
// event, then `done` the analysis or `failed` a sentence saying why not. Its close() stops it.
function analysisStream(id, { progress, done, failed }) {
  const es = new EventSource(`/api/matches/${id}/analysis`);
  let over = false;
  const end = () => { over = true; es.close(); };
  es.addEventListener('progress', (e) => progress(JSON.parse(e.data)));
  es.addEventListener('done', (e) => { end(); done(JSON.parse(e.data)); });
  es.addEventListener('failed', (e) => { end(); failed(JSON.parse(e.data).error); });
  es.onerror = () => {
    if (over) return;
    end();
    failed('the connection to the server broke; try again');
  };
  return es;
}

// ---- the win-chance graph of an analysed match ------------------------------------------------

const SVG = 'http://www.w3.org/2000/svg';
function svgEl(tag, attrs, parent) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (parent) parent.appendChild(e);
  return e;
}

// The first seat's chance to win before the first move and after each move (the analysis gives
// them from the mover's side), as an SVG line over the game: marks coloured by their kind,
// proven values drawn as squares, the position shown ringed; a click on a move's column calls
// `pick` with its ply.
function winGraph(moves, firstSide, index, pick) {
  const W = 600;
  const H = 140;
  const padL = 34;
  const padR = 8;
  const padT = 8;
  const padB = 18;
  const n = moves.length;
  const firstChance = (m, after) => {
    const mine = after ? m.win_after : m.win_before;
    return m.seat === 0 ? mine : 1 - mine;
  };
  const points = n ? [{ ply: 0, p: firstChance(moves[0], false), exact: moves[0].before_exact, mark: '' }] : [];
  for (const m of moves) points.push({ ply: m.ply, p: firstChance(m, true), exact: m.after_exact, mark: m.mark });
  const x = (ply) => padL + (n ? ply / n : 0) * (W - padL - padR);
  const y = (p) => padT + (1 - Math.max(0, Math.min(1, p))) * (H - padT - padB);
  const svg = svgEl('svg', { viewBox: `0 0 ${W} ${H}`, class: 'win-graph', id: 'win-graph', role: 'img',
    'aria-label': `Win chance for ${firstSide} over the game` });
  svgEl('rect', { x: padL, y: padT, width: W - padL - padR, height: H - padT - padB, fill: '#fff', stroke: '#d5d5d5' }, svg);
  for (const [p, label] of [[1, '100%'], [0.5, '50%'], [0, '0%']]) {
    svgEl('line', { x1: padL, x2: W - padR, y1: y(p), y2: y(p), stroke: p === 0.5 ? '#999' : '#eee', 'stroke-dasharray': p === 0.5 ? '4 3' : '' }, svg);
    svgEl('text', { x: padL - 4, y: y(p) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#5c5c5c' }, svg).textContent = label;
  }
  if (points.length) {
    const line = points.map((q) => `${x(q.ply).toFixed(1)},${y(q.p).toFixed(1)}`).join(' ');
    svgEl('polygon', { points: `${x(0)},${y(0)} ${line} ${x(n)},${y(0)}`, fill: '#1f4fa8', 'fill-opacity': 0.12 }, svg);
    svgEl('polyline', { points: line, fill: 'none', stroke: '#1f4fa8', 'stroke-width': 2 }, svg);
  }
  svgEl('line', { x1: x(index), x2: x(index), y1: padT, y2: H - padB, stroke: '#ff8c00', 'stroke-width': 2, class: 'now' }, svg);
  const colours = { '?!': '#c99a00', '?': '#d46a00', '??': '#b00020' };
  for (const q of points) {
    const cx = x(q.ply);
    const cy = y(q.p);
    const fill = colours[q.mark] || '#1f4fa8';
    const r = q.mark ? 4.5 : 2.5;
    const dot = q.exact
      ? svgEl('rect', { x: cx - r, y: cy - r, width: 2 * r, height: 2 * r, fill }, svg)
      : svgEl('circle', { cx, cy, r, fill }, svg);
    dot.setAttribute('class', `pt${q.mark ? ' marked' : ''}${q.exact ? ' proven' : ''}`);
    dot.setAttribute('data-ply', q.ply);
    if (q.ply === index) svgEl('circle', { cx, cy, r: 8, fill: 'none', stroke: '#ff8c00', 'stroke-width': 2 }, svg);
  }
  // One clickable column per position, each the width of a move.
  const step = n ? (W - padL - padR) / n : 0;
  for (const q of points) {
    const hit = svgEl('rect', { x: x(q.ply) - step / 2, y: 0, width: Math.max(step, 6), height: H, fill: 'transparent',
      class: 'hit', 'data-ply': q.ply }, svg);
    const pct = Math.round(100 * q.p);
    svgEl('title', {}, hit).textContent = q.ply === 0 ? `start: ${pct}% for ${firstSide}`
      : `after move ${q.ply}${q.mark ? ` ${q.mark}` : ''}: ${pct}% for ${firstSide}${q.exact ? ' (proven)' : ''}`;
    hit.addEventListener('click', () => pick(q.ply));
  }
  const box = h('figure', { class: 'graph' }, svg,
    h('figcaption', { class: 'legend' }, `${firstSide}'s chance to win after each move (100% at the top). ` +
      'Squares are proven results; ?! ? ?? marks in yellow, orange and red. Click to see that move.'));
  return box;
}

// ---- routing --------------------------------------------------------------------------------

const main = document.getElementById('main');
let current = null;

function route() {
  if (current && current.stop) current.stop();
  current = null;
  main.replaceChildren();
  const hash = location.hash || '#/';
  let m;
  if ((m = hash.match(/^#\/m\/(\d{1,15})$/))) current = new MatchPage(Number(m[1]));
  else if (hash === '#/new') current = new NewPage();
  else if (hash === '#/login') current = new LoginPage();
  else if (hash === '#/pair') current = new PairPage();
  else if ((m = hash.match(/^#\/top(?:\/([a-z0-9_]{1,32}))?$/))) current = new LeaderboardPage(m[1]);
  else if ((m = hash.match(/^#\/p\/([A-Za-z0-9_.:%-]{1,64})$/))) current = new PlayerPage(decodeURIComponent(m[1]));
  else current = new ListPage();
  main.focus({ preventScroll: true });
}
window.addEventListener('hashchange', route);
// The first page waits for the game list: every board is drawn from its game's look.
window.addEventListener('DOMContentLoaded', () => {
  showMe();
  games().then(setLooks, () => {}).finally(route);
});

// ---- the live list --------------------------------------------------------------------------

class ListPage {
  constructor() {
    this.sections = [
      { title: 'Live now', query: 'status=active&limit=12' },
      { title: 'Open seats: join a game', query: 'status=waiting&open=1&limit=12' },
      { title: 'Just finished', query: 'status=finished&limit=12' },
    ];
    this.root = h('div', { class: 'list-page' },
      h('p', { class: 'intro' }, 'Watch any match live, or ', h('a', { href: '#/new' }, 'start one'), '.'));
    this.boxes = this.sections.map((s) => {
      const grid = h('div', { class: 'cards' });
      this.root.appendChild(h('section', {}, h('h2', {}, s.title), grid));
      return grid;
    });
    main.appendChild(this.root);
    this.refresh();
    // Small boards follow the matches by polling: one request per section every two seconds
    // is far cheaper than an event stream per card.
    this.timer = setInterval(() => this.refresh(), 2000);
  }

  stop() { clearInterval(this.timer); }

  async refresh() {
    await games().catch(() => null);
    await Promise.all(this.sections.map(async (s, i) => {
      try {
        const { matches } = await api(`/api/matches?${s.query}`);
        this.boxes[i].replaceChildren(...(matches.length ? matches.map((m) => card(m))
          : [h('p', { class: 'empty' }, 'None right now.')]));
      } catch (e) {
        this.boxes[i].replaceChildren(h('p', { class: 'error' }, e.message));
      }
    }));
  }
}

// "5 min + 3 s a move", "1 min", "0.54 s", "24 h + 1 h a move".
function timeControlText(tc) {
  const span = (ms) => ms >= 3600000 && ms % 3600000 === 0 ? `${ms / 3600000} h`
    : ms >= 60000 && ms % 60000 === 0 ? `${ms / 60000} min` : `${ms / 1000} s`;
  return span(tc.initial_ms) + (tc.increment_ms > 0 ? ` + ${span(tc.increment_ms)} a move` : '');
}

function card(m) {
  const who = m.seats.map((s) => s.taken
    ? s.name + (s.guest ? ' (guest)' : s.rating > 0 ? ` (${ratingText(s.rating, s.provisional)})` : '')
    : '(open)').join(' vs ');
  const status = m.status === 'finished' ? (m.result ? m.result.text : 'finished')
    : m.status === 'waiting' ? 'waiting for a player' : `${m.plies} moves`;
  // What a player joining an open seat agrees to: the clock, and whether it is rated.
  const terms = [m.time_control ? timeControlText(m.time_control) : 'no clocks', m.rated ? 'rated' : 'casual'];
  return h('a', { class: 'card', href: `#/m/${m.id}`, 'data-match': m.id },
    m.board ? drawBoard(m.spec.name, m.board, { small: true, cylinder: m.spec.options.cylinder === 'true' })
      : h('div', { class: 'noboard' }),
    h('span', { class: 'card-title' }, `#${m.id} ${gameTitle(m.spec.name)}`),
    h('span', { class: 'card-terms' }, terms.join(' · ')),
    h('span', { class: 'card-who' }, who),
    h('span', { class: 'card-status' }, status));
}

// ---- a new match ----------------------------------------------------------------------------

class NewPage {
  constructor() {
    this.root = h('div', { class: 'new-page' }, h('h2', {}, 'New match'), h('p', {}, 'Loading games…'));
    main.appendChild(this.root);
    games().then((list) => this.build(list)).catch((e) => this.root.appendChild(h('p', { class: 'error' }, e.message)));
  }

  build(list) {
    const game = h('select', { id: 'game', name: 'game', onchange: () => this.fill() },
      list.map((g) => h('option', { value: g.name }, g.title)));
    this.options = h('div', { class: 'options' });
    this.level = h('select', { id: 'level' });
    this.level2 = h('select', { id: 'level2' });
    this.side = h('select', { id: 'side' });
    const opponent = h('select', { id: 'opponent', onchange: () => this.fill() },
      h('option', { value: 'bot' }, 'a bot'),
      h('option', { value: 'friend' }, 'a friend (an open seat with a link to share)'),
      h('option', { value: 'bots' }, 'nobody: watch two bots'));
    const clock = h('select', { id: 'clock' },
      h('option', { value: '' }, 'no clocks'),
      h('option', { value: '60+0' }, '1 minute'),
      h('option', { value: '180+2' }, '3 minutes + 2 s a move'),
      h('option', { value: '300+3' }, '5 minutes + 3 s a move'),
      h('option', { value: '600+5' }, '10 minutes + 5 s a move'));
    const name = h('input', { id: 'name', maxlength: 32, autocomplete: 'nickname', placeholder: 'guest' });
    this.error = h('p', { class: 'error', role: 'alert' });
    this.game = game;
    this.opponent = opponent;
    const label = (text, control) => h('label', {}, h('span', {}, text), control);
    this.botRow = label('Bot level', this.level);
    this.bot2Row = label('Second bot', this.level2);
    this.sideRow = label('You play', this.side);
    this.nameRow = label('Your name', name);
    ({ input: this.rated, row: this.ratedRow } = ratedBox('new-rated'));
    const form = h('form', { class: 'new-form', onsubmit: (e) => { e.preventDefault(); this.create(name.value, clock.value); } },
      label('Game', game), this.options, label('Against', opponent), this.botRow, this.bot2Row,
      this.sideRow, this.nameRow, this.ratedRow, label('Clocks', clock),
      h('button', { type: 'submit', id: 'create' }, 'Create'), this.error);
    this.root.replaceChildren(h('h2', {}, 'New match'), form);
    this.fill();
  }

  info() { return gamesCache.find((g) => g.name === this.game.value); }

  fill() {
    const g = this.info();
    this.options.replaceChildren(...g.options.map((o) => h('label', { title: o.description },
      h('span', {}, o.name), h('input', { 'data-option': o.name, placeholder: o.default, maxlength: 200 }),
      h('small', {}, o.description))));
    const rating = (l) => (l.rating_source === 'live' ? ` ${l.rating}` : l.rating_source === 'ladder' ? ` \u2248 ${l.rating}` : '');
    const levels = g.levels.map((l) => h('option', { value: l.name, title: l.description }, l.name + rating(l)));
    this.level.replaceChildren(...levels);
    this.level2.replaceChildren(...levels.map((o) => o.cloneNode(true)));
    this.level.value = this.level2.value = g.levels.some((l) => l.name === 'medium') ? 'medium' : g.levels[0].name;
    this.side.replaceChildren(...g.sides.map((s, i) => h('option', { value: i }, `${s} (${seatLabel(i)}${i === 0 ? ', moves first' : ''})`)));
    const mode = this.opponent.value;
    this.botRow.hidden = mode === 'friend';
    this.bot2Row.hidden = mode !== 'bots';
    this.sideRow.hidden = this.nameRow.hidden = mode === 'bots';
    // A player plays under their own name (and is rated); a guest picks one.
    if (me.get()) this.nameRow.hidden = true;
    // Only a player's games are rated: a guest's, and two bots', never are.
    this.ratedRow.hidden = !me.get() || mode === 'bots';
  }

  async create(name, clock) {
    const mode = this.opponent.value;
    const options = {};
    for (const input of this.options.querySelectorAll('input[data-option]')) {
      if (input.value.trim()) options[input.dataset.option] = input.value.trim();
    }
    const mine = Number(this.side.value);
    let seatsSpec;
    if (mode === 'bots') {
      seatsSpec = [{ bot: true, level: this.level.value }, { bot: true, level: this.level2.value }];
    } else {
      seatsSpec = [0, 1].map((i) => (i === mine || mode === 'friend') ? { bot: false } : { bot: true, level: this.level.value });
    }
    const body = { game: this.game.value, options, seats: seatsSpec, name: name.trim() || 'guest' };
    if (mode !== 'bots') body.take_seat = mine;
    if (!this.ratedRow.hidden && !this.rated.checked) body.casual = true;
    if (clock) {
      const [initial, increment] = clock.split('+').map(Number);
      body.clock = { initial_s: initial, increment_s: increment };
    }
    try {
      const out = await api('/api/matches', { method: 'POST', body, player: true });
      if (out.token) seats.put(out.match.id, out.seat, out.token);
      location.hash = `#/m/${out.match.id}`;
    } catch (e) {
      this.error.textContent = e.message;
    }
  }
}

// ---- one match: watch, play, replay --------------------------------------------------------

// A legal move as the cells it names in order ("22x15x6" -> 22, 15, 6); moves that name no cell
// ("pass", Tic-Tac-Two's "g:ne") become buttons.
function moveCells(text) {
  if (text === 'pass' || text.includes(':')) return null;
  return text.split(/[-x]/);
}

class MatchPage {
  constructor(id) {
    this.id = id;
    this.mine = seats.get(id);
    this.state = null;
    this.moves = [];
    this.last = [];
    this.mill = [];
    this.selection = [];
    this.cursor = [0, 0];
    this.replay = null;
    // For tests and curious people: when each move arrived, and how many whole snapshots came
    // (one, unless the stream had to start over rather than resume).
    this.trace = (window.plyTrace = []);
    window.plySnapshots = 0;
    window.plyPage = this;
    // The gateway's clock less this browser's, for counting down to a claim.
    this.skew = 0;
    this.build();
    this.connect();
    this.tick = setInterval(() => { this.drawClocks(); this.drawPresence(); }, 200);
    if (this.mine) {
      this.onHide = () => this.leave();
      // Back from the browser's page cache: here again.
      this.onShow = (e) => { if (e.persisted && this.gone) { this.gone = false; this.beat(); } };
      window.addEventListener('pagehide', this.onHide);
      window.addEventListener('pageshow', this.onShow);
      this.beat();
    }
  }

  stop() {
    this.stopped = true;
    clearInterval(this.tick);
    clearTimeout(this.pollTimer);
    clearTimeout(this.catchUpTimer);
    clearTimeout(this.rematchTimer);
    if (this.es) this.es.close();
    if (this.live && this.live.es) this.live.es.close();
    document.removeEventListener('keydown', this.onKey);
    if (this.onHide) window.removeEventListener('pagehide', this.onHide);
    if (this.onShow) window.removeEventListener('pageshow', this.onShow);
    this.leave();
  }

  // A player's page tells the lobby (through the gateway) that the player is here, every few
  // seconds while the match is on: the opponent sees who left, and may claim only against them.
  async beat() {
    this.beatTimer = null;
    if (this.gone || (this.state && this.state.status === 'finished')) return;
    let next = 8000;
    try {
      const out = await api(`/api/matches/${this.id}/presence`, { method: 'POST', token: this.mine.token, body: { here: true } });
      next = Math.max(1000, out.beat_ms || next);
      if (out.now_ms) this.skew = out.now_ms - Date.now();
    } catch (e) {
      // A seat the lobby does not know is not beaten for again; anything else is tried later.
      if ([400, 401, 403, 404].includes(e.status)) return;
    }
    if (!this.gone) this.beatTimer = setTimeout(() => this.beat(), next);
  }

  leave() {
    if (!this.mine || this.gone) return;
    this.gone = true;
    clearTimeout(this.beatTimer);
    api(`/api/matches/${this.id}/presence`, { method: 'POST', token: this.mine.token, body: { here: false }, keepalive: true })
      .catch(() => {});
  }

  build() {
    this.title = h('h2', { id: 'title' }, `Match #${this.id}`);
    this.status = h('p', { id: 'status', role: 'status', 'aria-live': 'polite' }, 'Connecting…');
    this.notice = h('p', { id: 'notice', role: 'alert', class: 'notice' });
    this.connection = h('p', { id: 'connection', class: 'connection' });
    this.presence = h('p', { id: 'presence', class: 'presence', 'aria-live': 'polite' });
    this.boardBox = h('div', { id: 'board', tabindex: 0, 'aria-label': 'Board. Arrow keys move, Enter picks a cell.' });
    this.extra = h('div', { id: 'extra-moves', class: 'buttons' });
    this.seatsBox = h('div', { id: 'seats' });
    this.controls = h('div', { id: 'controls', class: 'buttons' });
    this.moveList = h('ol', { id: 'moves', class: 'moves' });
    this.replayBox = h('div', { id: 'replay', class: 'buttons' });
    this.typed = h('input', { id: 'typed', maxlength: 64, autocomplete: 'off', 'aria-label': 'Type a move' });
    this.typeForm = h('form', { class: 'type-move', onsubmit: (e) => {
      e.preventDefault();
      if (this.typed.value.trim()) this.play(this.typed.value.trim());
      this.typed.value = '';
    } }, this.typed, h('button', { type: 'submit' }, 'Play'));
    this.legend = h('p', { class: 'legend' });
    this.analysisBox = h('div', { id: 'analysis', class: 'analysis' });
    main.appendChild(h('div', { class: 'match-page' },
      h('div', { class: 'board-col' }, this.title, this.status, this.presence, this.connection, this.boardBox, this.extra, this.typeForm, this.notice, this.replayBox, this.analysisBox),
      h('div', { class: 'side-col' }, this.seatsBox, this.controls, h('h3', {}, 'Moves'), this.legend, this.moveList)));
    this.boardBox.addEventListener('click', (e) => {
      const cell = e.target.closest('[data-cell]');
      if (cell) {
        this.cursor = [Number(cell.dataset.r), Number(cell.dataset.c)];
        this.pick(cell.dataset.cell);
      }
    });
    this.boardBox.addEventListener('keydown', (e) => this.boardKey(e));
    this.onKey = (e) => this.replayKey(e);
    document.addEventListener('keydown', this.onKey);
  }

  connect() {
    const view = this.mine ? '?view=player' : '';
    this.es = new EventSource(`/api/matches/${this.id}/events${view}`);
    this.es.addEventListener('snapshot', (e) => {
      window.plySnapshots++;
      this.adopt(JSON.parse(e.data), false);
    });
    this.es.addEventListener('move', (e) => {
      const data = JSON.parse(e.data);
      if (data.move.ply === this.moves.length + 1) this.moves.push(data.move);
      if (data.state) this.applyState(data.state, true);
      else this.render();
      this.trace.push({ ply: data.move.ply, commit_ms: data.move.time_ms, seen_ms: performance.timeOrigin + performance.now() });
    });
    this.es.addEventListener('state', (e) => this.applyState(JSON.parse(e.data), true));
    this.es.addEventListener('notice', (e) => { this.notice.textContent = JSON.parse(e.data).message; });
    this.es.addEventListener('failure', (e) => { this.status.textContent = JSON.parse(e.data).error; this.es.close(); });
    this.es.addEventListener('end', () => { this.es.close(); this.finished(); });
    this.es.onerror = () => {
      if (this.es.readyState === EventSource.CLOSED) {
        // The server refused the stream (no such match, or too many streams): the match by
        // asking every two seconds instead, or the reason it cannot be had.
        this.poll();
      } else if (!this.state || this.state.status !== 'finished') {
        this.status.textContent = 'Connection lost; reconnecting…';
      }
    };
  }

  // The whole match as this page follows it: a seat holder's view when the page holds a seat.
  fetchMatch() {
    return api(`/api/matches/${this.id}${this.mine ? '?view=player' : ''}`);
  }

  async poll() {
    try {
      const full = await this.fetchMatch();
      if (this.stopped) return;
      this.connection.textContent = 'Live updates are not available; the page asks every two seconds.';
      this.adopt(full, true);
      if (full.status !== 'finished') this.pollTimer = setTimeout(() => this.poll(), 2000);
    } catch (e) {
      if (this.stopped) return;
      this.status.textContent = e.message;
      if (!refusedForGood(e)) this.pollTimer = setTimeout(() => this.poll(), 2000);
    }
  }

  // The match page of a player is a spectator's once the match is over: every bot's search.
  async finished() {
    try {
      const full = await api(`/api/matches/${this.id}`);
      this.adopt(full, false);
    } catch { /* the stream's last state stays */ }
  }

  // A whole match (a snapshot, an answer from the API): its moves and its state, unless the page
  // already shows a later position (an answer the stream overtook).
  adopt(match, diff) {
    if (this.overtaken(match)) return;
    this.moves = match.moves;
    this.applyState(match, diff);
  }

  // A state behind the one shown: fewer moves, or a match still on once the page saw its end.
  overtaken(st) {
    return !!this.state && (st.plies < this.state.plies ||
      (this.state.status === 'finished' && st.status !== 'finished'));
  }

  // The page shows a state only beside the moves that led to it. A state behind the one shown is
  // an answer overtaken by the stream and is dropped; one that does not match the move list (a
  // move event lost or out of sequence) has the whole match fetched, and that is shown instead.
  applyState(st, diff) {
    if (this.overtaken(st)) return;
    if (st.plies !== this.moves.length) {
      if (st.moves && st.moves.length === st.plies) {
        this.moves = st.moves;
      } else {
        this.wanted = Math.max(this.wanted || 0, st.plies);
        return this.catchUp();
      }
    }
    if (diff && this.state && st.board && this.state.board && st.plies !== this.state.plies) {
      this.last = changedCells(st.spec.name, this.state.board, st.board);
      this.mill = closedMill(st.spec.name, this.state.board, st.board);
    }
    if (this.state && st.plies !== this.state.plies) {
      this.selection = [];
      this.notice.textContent = '';
    }
    if (this.state && this.state.rematch_offer === this.mine?.seat && st.rematch_offer < 0 && !st.rematch_id) {
      this.rematchNote = 'No rematch: the offer was declined (or withdrawn).';
    }
    this.state = st;
    this.clockAt = performance.now();
    this.render();
    if (this.amPlayer && st.status === 'finished') this.followRematch();
    if (st.status === 'finished' && !this.review) this.loadReview();
    if (this.live) this.followLive();
  }

  // Whether the page still lacks moves the stream told it of (applyState's `wanted`).
  behind() {
    return !this.stopped && (!this.state || this.wanted > this.state.plies);
  }

  async catchUp() {
    if (this.catchingUp || !this.behind()) return;
    this.catchingUp = true;
    clearTimeout(this.catchUpTimer);
    const before = this.state ? this.state.plies : -1;
    try {
      const full = await this.fetchMatch();
      this.catchingUp = false;
      if (this.stopped) return;
      this.adopt(full, true);
      // Over by now: the spectator's view, every bot's search, as at the end of the stream (the
      // player's view just adopted stays if that cannot be had).
      if (full.status === 'finished' && this.mine) return this.finished();
      // Events that came while it was asked went further: ask again, at once while the answers
      // gain on them, less and less often (up to every two seconds) while they do not.
      if (this.behind()) {
        const gained = !!this.state && this.state.plies > before;
        this.catchUpDelay = gained ? 100 : Math.min(2000, (this.catchUpDelay || 100) * 2);
        this.catchUpTimer = setTimeout(() => this.catchUp(), this.catchUpDelay);
      }
    } catch (e) {
      this.catchingUp = false;
      if (!this.behind()) return;
      if (refusedForGood(e)) {
        this.status.textContent = e.message;
        return;
      }
      // Still behind, and the next event may be a person's move minutes away: asked again in
      // two seconds, as poll() does.
      this.status.textContent = `${e.message}; asking again…`;
      this.catchUpTimer = setTimeout(() => this.catchUp(), 2000);
    }
  }

  // After the end, a player's page asks every two seconds how the rematch stands (the live
  // stream is over), and goes into the rematch once both agreed, if this page asked for it.
  followRematch() {
    const st = this.state;
    if (st.rematch_id > 0) {
      if (this.rematchWanted && !this.movingOn) this.rematch(false);
      return;
    }
    if (this.rematchTimer) return;
    this.rematchTimer = setTimeout(async () => {
      try {
        const full = await api(`/api/matches/${this.id}`);
        this.rematchTimer = null;
        if (!this.stopped) this.adopt(full, false);
      } catch (e) {
        this.rematchTimer = null;
        if (!this.stopped && !refusedForGood(e)) this.followRematch();
      }
    }, 2000);
  }

  // Offers or accepts a rematch (or, with `decline`, withdraws or declines it); a rematch made
  // comes back with this player's seat in it, kept like a joined seat, and the page goes there.
  async rematch(decline) {
    this.rematchWanted = !decline;
    this.rematchNote = '';
    try {
      const out = await api(`/api/matches/${this.id}/rematch`, { method: 'POST', token: this.mine.token, body: { decline } });
      if (out.rematch) {
        this.movingOn = true;
        seats.put(out.rematch.id, out.rematch.seat, out.rematch.token);
        location.hash = `#/m/${out.rematch.id}`;
        return;
      }
      this.adopt(out.match, false);
    } catch (e) {
      this.notice.textContent = `No rematch: ${e.message}`;
    }
  }

  async claim(draw) {
    try {
      const out = await api(`/api/matches/${this.id}/claim`, { method: 'POST', token: this.mine.token, body: { draw } });
      this.adopt(out.match, false);
    } catch (e) {
      this.notice.textContent = `Claim refused: ${e.message}`;
    }
  }

  // "bob left the game - you can claim the win in 1:20", as the terminal client says it.
  drawPresence() {
    const st = this.state;
    if (!st) return;
    const now = Date.now() + this.skew;
    const lines = (st.away || []).filter((a) => !(this.amPlayer && a.seat === this.mine.seat)).map((a) => {
      let line = `${a.name || st.seats[a.seat]?.side || seatLabel(a.seat)} left the game`;
      if (this.amPlayer && a.claim_at_ms > 0) {
        const wait = a.claim_at_ms - now;
        line += wait > 0 ? ` - you can claim the win in ${formatClock(wait)}` : ' - you can claim the win now';
      }
      return line;
    });
    const text = this.replay ? '' : lines.join('; ');
    if (this.presence.textContent !== text) this.presence.textContent = text;
  }

  get game() { return this.state.spec.name; }
  get amPlayer() { return !!this.mine && this.state && this.mine.seat < this.state.seats.length; }
  get myTurn() { return this.amPlayer && this.state.status === 'active' && this.state.to_move === this.mine.seat; }

  legal() {
    if (!this.myTurn) return [];
    return this.state.legal_moves.map((text) => ({ text, cells: moveCells(text) }));
  }

  // A cell was clicked (or chosen with the keyboard): finish a move, or go on picking its cells.
  pick(name) {
    if (!this.state || this.state.status === 'finished' || this.replay) return;
    if (!this.amPlayer) {
      this.notice.textContent = 'You are watching; join an open seat to play.';
      return;
    }
    const path = [...this.selection, name];
    const fits = this.legal().filter((m) => m.cells && path.every((c, i) => m.cells[i] === c));
    const done = fits.find((m) => m.cells.length === path.length);
    if (done) return this.play(done.text);
    if (fits.length) {
      this.selection = path;
      return this.render();
    }
    if (this.selection.length) {
      // A click elsewhere starts again from that cell, if a move starts there.
      this.selection = [];
      if (this.legal().some((m) => m.cells && m.cells[0] === name)) return this.pick(name);
    }
    // Not a move this page knows: the lobby decides, and its reason is shown.
    this.play(this.selection.length ? [...this.selection, name].join('-') : name);
  }

  async play(text) {
    this.selection = [];
    this.notice.textContent = '';
    try {
      const out = await api(`/api/matches/${this.id}/move`, { method: 'POST', token: this.mine?.token,
        body: { ply: this.state.plies, move: text } });
      if (out.match.plies > this.state.plies) {
        for (const m of out.match.moves.slice(this.moves.length)) this.moves.push(m);
        this.applyState(out.match, true);
      }
    } catch (e) {
      this.notice.textContent = `Move ${text} refused: ${e.message}`;
      this.render();
    }
  }

  async act(what) {
    if (what === 'resign' && !confirm('Resign this match?')) return;
    try {
      const out = await api(`/api/matches/${this.id}/${what}`, { method: 'POST', token: this.mine.token });
      this.applyState(out.match, false);
    } catch (e) { this.notice.textContent = e.message; }
  }

  async join(seat, name) {
    try {
      const out = await api(`/api/matches/${this.id}/join`, { method: 'POST', body: { seat, name: name || 'guest' }, player: true });
      seats.put(this.id, out.seat, out.token);
      route();
    } catch (e) { this.notice.textContent = e.message; }
  }

  boardKey(e) {
    if (!this.state) return;
    const rows = this.currentBoard()?.rows;
    if (!rows) return;
    const flip = this.flipped() ? -1 : 1;
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (moves[e.key]) {
      e.preventDefault();
      e.stopPropagation();
      const [dr, dc] = moves[e.key];
      this.cursor = [Math.min(rows.length - 1, Math.max(0, this.cursor[0] + dr * flip)),
        Math.min(rows[0].length - 1, Math.max(0, this.cursor[1] + dc * flip))];
      this.drawBoard();
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      const cell = this.boardBox.querySelector(`[data-r="${this.cursor[0]}"][data-c="${this.cursor[1]}"]`);
      if (cell) this.pick(cell.dataset.cell);
    } else if (e.key === 'Escape') {
      this.selection = [];
      this.drawBoard();
    }
  }

  replayKey(e) {
    if (!this.replay || e.target.closest('input, select, textarea')) return;
    const steps = { ArrowLeft: -1, ArrowRight: 1, Home: -1e9, End: 1e9 };
    if (steps[e.key] === undefined || e.target === this.boardBox) return;
    e.preventDefault();
    this.step(steps[e.key]);
  }

  flipped() { return lookOf(this.game).flip_for_first_seat && this.amPlayer && this.mine.seat === 0; }

  currentBoard() {
    if (this.replay) return this.replay.boards[this.replay.index];
    return this.state.board;
  }

  render() {
    const st = this.state;
    if (!st) return;
    this.title.textContent = `Match #${st.id}: ${gameTitle(st.spec.name)}`;
    games().then(() => { this.title.textContent = `Match #${st.id}: ${gameTitle(st.spec.name)}`; }).catch(() => {});
    this.status.textContent = this.statusText();
    this.drawBoard();
    this.drawSeats();
    this.drawControls();
    this.drawMoves();
    this.drawPresence();
    this.drawAnalysis();
  }

  statusText() {
    const st = this.state;
    if (this.replay) {
      const result = st.result ? ` (${st.result.text})` : '';
      const judged = this.replay.analysis && this.replay.analysis.moves[this.replay.index - 1];
      const verdict = judged
        ? ` · ${judged.mark ? `${judged.mark} ` : ''}${judged.before} → ${judged.after} for the mover` +
          `${judged.exact ? ' (proven)' : ''}, best was ${judged.best}`
        : '';
      return `Replay: position after ${this.replay.index} of ${this.replay.boards.length - 1} moves${result}${verdict}`;
    }
    if (st.status === 'finished') {
      // A rated game its result does not rate says so (a draw agreed before anyone moved).
      const note = st.result && st.result.rating_note ? ` · ${st.result.rating_note}` : '';
      return `Game over: ${st.result ? st.result.text : 'finished'}${note}`;
    }
    if (st.status === 'waiting') {
      const open = st.seats.filter((s) => !s.taken).map((s) => `${s.side} (${seatLabel(s.index)})`);
      return `Waiting for a player: ${open.join(', ')} is open`;
    }
    const side = st.seats[st.to_move]?.side || seatLabel(st.to_move);
    if (this.myTurn) return `Your move (${side})`;
    return `${side} to move`;
  }

  drawBoard() {
    const board = this.currentBoard();
    if (!board) {
      this.boardBox.replaceChildren(h('pre', {}, this.state.board_text || ''));
      return;
    }
    const legal = this.legal();
    const path = this.selection;
    // The next cells of a move begun; in Reversi, every legal move as a dot.
    let targets = path.length
      ? legal.filter((m) => m.cells && path.every((c, i) => m.cells[i] === c)).map((m) => m.cells[path.length])
      : [];
    if (!path.length && this.game === 'reversi' && !this.replay) targets = legal.filter((m) => m.cells).map((m) => m.cells[0]);
    const cylinder = this.state.spec.options.cylinder === 'true';
    const atEnd = !this.replay || this.replay.index === this.replay.boards.length - 1;
    const won = this.state.status === 'finished' && this.state.result && this.state.result.winner >= 0 &&
      this.state.result.reason === 'rules' && atEnd;
    const svg = drawBoard(this.game, board, {
      flip: this.flipped(),
      best: this.replay ? this.bestCells(board) : [],
      win: won ? winningCells(this.game, board, cylinder) : [],
      last: this.replay ? this.replayLast() : this.last,
      mill: this.replay ? this.replayMill() : this.mill,
      selected: path,
      targets,
      cursor: document.activeElement === this.boardBox ? this.cursor : null,
      cylinder,
    });
    svg.setAttribute('aria-label', `${gameTitle(this.game)} board`);
    // When the first board was drawn, for the page's own measurement (tests/web: weight).
    if (window.plyBoardDrawnMs === undefined) window.plyBoardDrawnMs = performance.now();
    this.boardBox.replaceChildren(svg);
    this.extra.replaceChildren(...legal.filter((m) => !m.cells).map((m) =>
      h('button', { type: 'button', 'data-move': m.text, onclick: () => this.play(m.text) },
        m.text === 'pass' ? 'Pass' : `Move the grid ${m.text.split(':')[1]}`)));
    this.typeForm.hidden = !this.amPlayer || this.state.status !== 'active' || !!this.replay;
  }

  replayLast() {
    const { boards, index } = this.replay;
    return index > 0 ? changedCells(this.game, boards[index - 1], boards[index]) : [];
  }

  replayMill() {
    const { boards, index } = this.replay;
    return index > 0 ? closedMill(this.game, boards[index - 1], boards[index]) : [];
  }

  drawSeats() {
    const st = this.state;
    this.seatsBox.replaceChildren(...st.seats.map((s, i) => h('div', {
      class: `seat${st.to_move === i && st.status === 'active' ? ' to-move' : ''}`, 'data-seat': i + 1 },
    sideGlyph(this.game, i),
    h('span', { class: 'seat-side' }, `${s.side} · ${seatLabel(i)}`),
    h('span', { class: 'seat-name' }, s.taken ? playerLink(s.player, s.name) : '(open)'),
    s.rating > 0 ? h('span', { class: 'rating', 'data-rating': i + 1 }, ratingText(s.rating, s.provisional)) : null,
    s.rating > 0 && s.rating_after > 0 ? h('span', { class: `rating-change ${s.rating_after >= s.rating ? 'up' : 'down'}`, 'data-rating-change': i + 1 },
      `→ ${s.rating_after} (${s.rating_after >= s.rating ? '+' : ''}${s.rating_after - s.rating})`) : null,
    s.guest ? h('span', { class: 'guest', title: 'a guest: not a registered player' }, 'guest') : null,
    this.amPlayer && this.mine.seat === i ? h('span', { class: 'you' }, 'you') : null,
    st.status === 'active' && s.away && !s.bot && !(this.amPlayer && this.mine.seat === i) ? h('span', { class: 'away' }, 'left') : null,
    st.time_control ? h('span', { class: 'clock', 'data-clock': i }) : null)));
    this.drawClocks();
  }

  drawClocks() {
    const st = this.state;
    if (!st || !st.time_control) return;
    for (const el of this.seatsBox.querySelectorAll('[data-clock]')) {
      const i = Number(el.dataset.clock);
      let ms = st.seats[i].clock_ms;
      if (st.status === 'active' && st.to_move === i) ms -= performance.now() - this.clockAt;
      el.textContent = formatClock(ms);
      el.classList.toggle('low', ms < 10000);
    }
  }

  drawControls() {
    const st = this.state;
    const items = [];
    if (st.status === 'waiting' && !this.amPlayer) {
      const name = h('input', { id: 'join-name', maxlength: 32, placeholder: 'your name', 'aria-label': 'Your name' });
      if (me.get()) items.push(h('span', {}, `You play as ${me.get().name}.`));
      else items.push(name);
      for (const s of st.seats.filter((x) => !x.taken && !x.bot)) {
        items.push(h('button', { type: 'button', 'data-join': s.index + 1, onclick: () => this.join(s.index, name.value.trim()) },
          `Play ${s.side} (${seatLabel(s.index)})`));
      }
    }
    if (this.amPlayer && st.status === 'waiting') {
      const link = `${location.origin}/#/m/${st.id}`;
      const input = h('input', { id: 'share', readonly: true, value: link, 'aria-label': 'Link for a friend' });
      items.push(h('p', { class: 'share' }, 'Send this link to a friend: ', input,
        h('button', { type: 'button', onclick: () => navigator.clipboard?.writeText(link) }, 'Copy')));
    }
    if (this.amPlayer && st.status === 'active') {
      const offered = st.draw_offer >= 0 && st.draw_offer !== this.mine.seat;
      items.push(h('button', { type: 'button', id: 'draw', onclick: () => this.act('draw') },
        offered ? 'Accept the draw' : 'Offer a draw'));
      items.push(h('button', { type: 'button', id: 'resign', onclick: () => this.act('resign') }, 'Resign'));
      if (st.draw_offer === this.mine.seat) items.push(h('span', {}, 'Draw offered.'));
      // The opponent left on their move: the claim is the lobby's to grant (it says how long
      // is left when it is too early).
      if ((st.away || []).some((a) => a.seat !== this.mine.seat && a.claim_at_ms > 0)) {
        items.push(h('button', { type: 'button', id: 'claim', onclick: () => this.claim(false) }, 'Claim the win'));
        items.push(h('button', { type: 'button', id: 'claim-draw', onclick: () => this.claim(true) }, 'Claim a draw'));
      }
    }
    if (this.amPlayer && st.status === 'finished' && !this.replay) {
      const offer = st.rematch_offer;
      const them = st.seats[1 - this.mine.seat];
      if (st.rematch_id > 0) {
        items.push(h('button', { type: 'button', id: 'rematch-go', onclick: () => this.rematch(false) }, `Go to the rematch (#${st.rematch_id})`));
      } else if (offer === this.mine.seat) {
        items.push(h('span', { id: 'rematch-state' }, 'Rematch offered; waiting for an answer.'));
        items.push(h('button', { type: 'button', id: 'rematch-withdraw', onclick: () => this.rematch(true) }, 'Withdraw'));
      } else if (offer >= 0) {
        items.push(h('span', { id: 'rematch-state' }, `${them?.name || them?.side || 'Your opponent'} offers a rematch.`));
        items.push(h('button', { type: 'button', id: 'rematch-accept', onclick: () => this.rematch(false) }, 'Accept'));
        items.push(h('button', { type: 'button', id: 'rematch-decline', onclick: () => this.rematch(true) }, 'Decline'));
      } else {
        items.push(h('button', { type: 'button', id: 'rematch', onclick: () => this.rematch(false) }, 'Rematch'));
        if (this.rematchNote) items.push(h('span', { id: 'rematch-state' }, this.rematchNote));
      }
    }
    if (st.status === 'active' && st.seats.length && st.seats.every((s) => s.bot)) {
      const on = this.live && !this.live.stopped;
      items.push(h('button', { type: 'button', id: 'live-analyse', 'aria-pressed': on ? 'true' : 'false',
        onclick: () => (on ? this.stopLive() : this.startLive()) }, on ? 'Stop the live analysis' : 'Analyse as it plays'));
    }
    if (st.status === 'finished' && !this.replay) {
      items.push(h('button', { type: 'button', id: 'replay-start', onclick: () => this.startReplay() }, 'Replay move by move'));
    }
    this.controls.replaceChildren(...items);
  }

  drawMoves() {
    const st = this.state;
    const showBots = !this.amPlayer || st.status === 'finished';
    const first = st.seats[0]?.side || seatLabel(0);
    const second = st.seats[1]?.side || seatLabel(1);
    // Scores from one stated side, the first seat's, as the terminal client shows them.
    this.legend.textContent = showBots && this.moves.some((m) => m.bot && m.bot.depth !== undefined)
      ? `Bots: search depth, score from ${first}'s side (+ is good for ${first}, - for ${second}), nodes searched.` : '';
    const items = this.moves.map((m) => {
      const side = st.seats[m.seat]?.side || seatLabel(m.seat);
      const bot = showBots && m.bot && m.bot.depth !== undefined
        ? h('span', { class: 'bot' }, botSummary(m, st)) : null;
      const analysis = this.replay ? this.replay.analysis : this.shownAnalysis();
      const judged = analysis && analysis.moves[m.ply - 1];
      const mark = judged && judged.mark
        ? h('span', { class: `mark ${{ '?!': 'inaccuracy', '?': 'mistake', '??': 'blunder' }[judged.mark] || ''}`,
          title: `${judged.before} → ${judged.after} for the mover; best was ${judged.best}${judged.exact ? ' (proven)' : ''}` }, judged.mark) : null;
      const li = h('li', { 'data-ply': m.ply, class: this.replay && this.replay.index === m.ply ? 'current' : '' },
        h('span', { class: 'mv-side' }, side), ' ', h('span', { class: 'mv' }, m.move), mark ? ' ' : null, mark, bot ? ' ' : null, bot);
      // A finished match's move list is a way into its replay at that move.
      if (this.replay) li.addEventListener('click', () => this.step(m.ply - this.replay.index));
      else if (st.status === 'finished') li.addEventListener('click', () => this.startReplay(m.ply));
      return li;
    });
    const atEnd = this.moveList.scrollTop + this.moveList.clientHeight >= this.moveList.scrollHeight - 4;
    this.moveList.replaceChildren(...items);
    if (atEnd && !this.replay) this.moveList.scrollTop = this.moveList.scrollHeight;
    const current = this.replay && this.moveList.querySelector('li.current');
    if (current) current.scrollIntoView({ block: 'nearest' });
  }

  // The finished match's positions and its stored analysis, asked once when the match is over:
  // an analysed match shows its graph and accuracies to everyone who opens it.
  async loadReview() {
    this.review = { loading: true };
    try {
      this.review = await api(`/api/matches/${this.id}/replay`);
      // The marks go into the move list too.
      if (this.review.analysis) this.render();
    } catch { this.review = null; }
  }

  async startReplay(at = 0, fresh = false) {
    try {
      const data = !fresh && this.review && this.review.boards ? this.review : await api(`/api/matches/${this.id}/replay`);
      this.review = data;
      this.moves = data.moves;
      this.replay = { boards: data.boards, index: Math.max(0, Math.min(at, data.boards.length - 1)), analysis: data.analysis || null };
      this.replayBox.replaceChildren(
        h('button', { type: 'button', id: 'rp-first', 'aria-label': 'Start', onclick: () => this.step(-1e9) }, '|◀'),
        h('button', { type: 'button', id: 'rp-prev', 'aria-label': 'Back one move', onclick: () => this.step(-1) }, '◀'),
        h('button', { type: 'button', id: 'rp-next', 'aria-label': 'Forward one move', onclick: () => this.step(1) }, '▶'),
        h('button', { type: 'button', id: 'rp-last', 'aria-label': 'End', onclick: () => this.step(1e9) }, '▶|'),
        h('button', { type: 'button', id: 'rp-exit', onclick: () => { this.leaveAnalysis(); this.replay = null; this.replayBox.replaceChildren(); this.render(); } }, 'Leave the replay'));
      if (!data.analysis) {
        this.replayBox.append(h('button', { type: 'button', id: 'rp-analyse', onclick: () => this.analyse() }, 'Analyse the game'));
      }
      this.render();
    } catch (e) { this.notice.textContent = e.message; }
  }

  // Has the lobby judge every move (or fetch its stored verdicts), showing the place in its queue
  // and then the positions judged; the replay then shows each move's mark.
  analyse() {
    if (this.analysing) return;
    const button = document.getElementById('rp-analyse');
    if (button) button.disabled = true;
    const box = h('p', { id: 'analysis-progress', class: 'progress', role: 'status' }, 'asking the lobby...');
    this.replayBox.append(box);
    const es = analysisStream(this.id, {
      progress: (p) => { box.textContent = progressText(p); },
      done: async () => {
        if (this.analysing === es) this.analysing = null;
        await this.startReplay(this.replay ? this.replay.index : 0, true);
      },
      failed: (text) => {
        if (this.analysing !== es) return;
        this.analysing = null;
        box.textContent = text;
        if (button) button.disabled = false;
      },
    });
    this.analysing = es;
  }

  leaveAnalysis() {
    if (this.analysing) this.analysing.close();
    this.analysing = null;
  }

  // The analysis shown outside the replay: the stored one of a finished match, else the live one.
  shownAnalysis() {
    return (this.review && this.review.analysis) || (this.live && this.live.analysis) || null;
  }

  // A match between bots followed with the lobby's analysis: the moves so far, then again
  // whenever moves have come (the lobby judges only the positions new since); once the match is
  // over, one last request makes the stored analysis, which then loads as any finished match's.
  startLive() {
    if (this.live && this.live.es) this.live.es.close();
    this.live = { analysis: null, es: null, note: 'asking the lobby...', stopped: false, final: false };
    this.render();
    this.followLive();
  }

  stopLive() {
    if (this.live && this.live.es) this.live.es.close();
    if (this.live) {
      this.live.es = null;
      this.live.stopped = true;
      this.live.note = '';
    }
    this.render();
  }

  followLive() {
    const live = this.live;
    if (!live || live.stopped || live.es || live.final || !this.state) return;
    const finished = this.state.status === 'finished';
    if (!finished && live.analysis && this.moves.length <= live.analysis.moves.length) return;
    live.es = analysisStream(this.id, {
      progress: (p) => {
        live.note = progressText(p);
        if (this.live === live && !live.analysis) this.drawAnalysis();
      },
      done: async (analysis) => {
        live.es = null;
        if (this.live !== live) return;
        live.analysis = analysis;
        live.note = '';
        if (!analysis.partial) {
          live.final = true;
          await this.loadReview();
        }
        this.render();
        this.followLive();
      },
      failed: (text) => {
        live.es = null;
        live.stopped = true;
        live.note = text;
        if (this.live === live) this.render();
      },
    });
  }

  // The cells of the analysis's best move in the replay's position (the move the next ply's
  // verdict compares with): every cell it names, a column's landing cell in Connect Four.
  bestCells(board) {
    const judged = this.replay.analysis && this.replay.analysis.moves[this.replay.index];
    const names = judged && judged.best ? moveCells(judged.best) : null;
    if (!names || !board || !board.rows) return [];
    const rows = board.rows;
    const column = lookOf(this.game).cell_names === 'column';
    const out = [];
    for (const name of names) {
      const found = [];
      for (let r = 0; r < rows.length; r++) {
        for (let c = 0; c < rows[r].length; c++) {
          if (rows[r][c] !== ' ' && cellName(this.game, rows, r, c) === name) found.push([r, c]);
        }
      }
      if (column) {
        const empty = found.filter(([r, c]) => rows[r][c] === '0');
        if (empty.length) out.push(empty[empty.length - 1]);
      } else {
        out.push(...found);
      }
    }
    return out;
  }

  // Under the board once the match is analysed: each side's accuracy, the win-chance graph
  // (from the first seat's side, as the legend says; clicking it replays that move) and, in the
  // replay, the best move of the position shown.
  drawAnalysis() {
    const analysis = this.replay ? this.replay.analysis : this.shownAnalysis();
    const note = !this.replay && this.live && this.live.note
      ? h('p', { id: 'live-progress', class: 'progress', role: 'status' }, this.live.note) : null;
    if (!analysis || !this.state) {
      if (note) this.analysisBox.replaceChildren(h('h3', {}, 'Analysis'), note);
      else if (this.analysisBox.firstChild) this.analysisBox.replaceChildren();
      return;
    }
    const st = this.state;
    const sideOf = (i) => st.seats[i]?.side || seatLabel(i);
    const lines = (analysis.players || []).map((p) => {
      const seat = st.seats[p.seat];
      const who = seat ? `${seat.side}${seat.name ? ` (${seat.name})` : ''}` : seatLabel(p.seat);
      // A side with no move has no accuracy (0% would read as the worst play there is).
      if (p.moves === 0) return h('p', { class: 'accuracy', 'data-seat': p.seat + 1 }, `${who}: no moves to judge`);
      return h('p', { class: 'accuracy', 'data-seat': p.seat + 1 },
        `${who}: accuracy ${p.accuracy.toFixed(1)}%, ${counted(p.inaccuracies, 'inaccuracy', 'inaccuracies')} (?!), ` +
        `${counted(p.mistakes, 'mistake', 'mistakes')} (?), ${counted(p.blunders, 'blunder', 'blunders')} (??)`);
    });
    const index = this.replay ? this.replay.index : analysis.moves.length;
    const graph = winGraph(analysis.moves, sideOf(0), index, (ply) => {
      if (this.replay) this.step(ply - this.replay.index);
      else if (st.status === 'finished') this.startReplay(ply);
    });
    let best = null;
    const next = this.replay && analysis.moves[this.replay.index];
    if (next && next.best) {
      const chance = Math.round(100 * next.win_before);
      best = h('p', { id: 'best-move', class: 'best-move' },
        `Best here for ${sideOf(next.seat)}: `, h('strong', {}, next.best),
        ` (${next.before}, ${chance}% to win${next.before_exact ? ', proven' : ''})`,
        next.best_line && next.best_line.length > 1 ? ` · line ${next.best_line.join(' ')}` : '');
    }
    const heading = analysis.partial
      ? h('h3', {}, `Analysis so far (${analysis.moves.length} ${analysis.moves.length === 1 ? 'move' : 'moves'})`)
      : h('h3', {}, 'Analysis');
    this.analysisBox.replaceChildren(...[heading, ...lines, graph, best, note].filter(Boolean));
  }

  step(delta) {
    if (!this.replay) return;
    const n = this.replay.boards.length - 1;
    this.replay.index = Math.max(0, Math.min(n, this.replay.index + delta));
    this.render();
  }
}

// ---- players: logging in, pairing, a player's page, the leaderboard ---------------------------

// The server-sent events of a fetch() answer (EventSource cannot send an Authorization header):
// yields {event, data} with `data` parsed.
async function* serverEvents(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      if (data) yield { event, data: JSON.parse(data) };
    }
  }
}

function formatWait(ms) {
  const s = Math.floor(ms / 1000);
  return s < 60 ? counted(s, 'second', 'seconds') : `${Math.floor(s / 60)} min ${s % 60} s`;
}

const clockChoices = () => [
  h('option', { value: '' }, 'no clocks'),
  h('option', { value: '60+0' }, '1 minute'),
  h('option', { value: '180+2' }, '3 minutes + 2 s a move'),
  h('option', { value: '300+3' }, '5 minutes + 3 s a move'),
  h('option', { value: '600+5' }, '10 minutes + 5 s a move')];

// The "Rated" box of the forms that start a player's game (checked: rated), and its row.
function ratedBox(id) {
  const input = h('input', { type: 'checkbox', id, checked: true });
  return { input, row: h('label', { class: 'inline' }, input, h('span', {}, ' Rated (your rating changes with the result)')) };
}

function clockOf(value) {
  if (!value) return null;
  const [initial, increment] = value.split('+').map(Number);
  return { initial_s: initial, increment_s: increment };
}

class LoginPage {
  constructor() {
    this.root = h('div', { class: 'login-page' });
    main.appendChild(this.root);
    this.draw(false);
  }

  draw(registered) {
    const p = me.get();
    if (p) {
      const key = h('p', { class: 'key-box' }, h('input', { id: 'key-text', readonly: true, value: p.key, 'aria-label': 'Your player key' }),
        h('button', { type: 'button', onclick: () => navigator.clipboard?.writeText(p.key) }, 'Copy'));
      this.root.replaceChildren(h('h2', {}, `You play as ${p.name}`),
        registered
          ? h('div', { id: 'new-key', class: 'notice-box' }, h('p', {}, 'Your player key is your password: keep it somewhere safe. ' +
            'It is the only way back to this name on another browser, or here after clearing the browser. It is shown once.'), key)
          : h('details', {}, h('summary', {}, 'Show my player key'), key),
        h('p', {}, h('a', { href: `#/p/${encodeURIComponent(p.name)}` }, 'Your ratings and games'), ' · ',
          h('a', { href: '#/pair' }, 'Find an opponent'), ' · ', h('a', { href: '#/new' }, 'Play a bot')),
        h('button', { type: 'button', id: 'logout', onclick: () => { me.clear(); this.draw(false); } }, 'Log out on this browser'));
      return;
    }
    const error = h('p', { class: 'error', role: 'alert', id: 'login-error' });
    const name = h('input', { id: 'reg-name', maxlength: 24, autocomplete: 'username', required: true, placeholder: 'a name (2 to 24 letters, digits, _ - .)' });
    const oldName = h('input', { id: 'key-name', maxlength: 24, autocomplete: 'username', placeholder: 'your name' });
    const oldKey = h('input', { id: 'key-input', maxlength: 128, autocomplete: 'current-password', type: 'password', placeholder: 'your player key' });
    const register = async (e) => {
      e.preventDefault();
      try {
        const out = await api('/api/login', { method: 'POST', body: { name: name.value.trim() } });
        me.put(out.player.name, out.key);
        this.draw(true);
      } catch (err) { error.textContent = err.message; }
    };
    const useKey = async (e) => {
      e.preventDefault();
      try {
        const out = await api('/api/login', { method: 'POST', body: { name: oldName.value.trim() }, player: oldKey.value.trim() });
        me.put(out.player.name, oldKey.value.trim());
        this.draw(false);
      } catch (err) { error.textContent = err.message; }
    };
    this.root.replaceChildren(h('h2', {}, 'Log in'),
      h('p', {}, 'A player has a name, ratings per game and rated games. Register a name and this browser keeps its key; ' +
        'nothing else is asked.'),
      h('form', { class: 'new-form', onsubmit: register }, h('label', {}, h('span', {}, 'New player'), name),
        h('button', { type: 'submit', id: 'register' }, 'Register this name')),
      h('form', { class: 'new-form', onsubmit: useKey }, h('label', {}, h('span', {}, 'Already a player (here or with `ply login`)'), oldName), oldKey,
        h('button', { type: 'submit', id: 'use-key' }, 'Log in with my key')),
      error,
      h('p', { class: 'legend' }, 'Or play as a guest: ', h('a', { href: '#/new' }, 'start a match'),
        ' under any name. A guest is marked as one, and guests\' games are not rated.'));
  }
}

class PairPage {
  constructor() {
    this.root = h('div', { class: 'pair-page' }, h('h2', {}, 'Find an opponent'));
    main.appendChild(this.root);
    if (!me.get()) {
      this.root.append(h('p', { id: 'pair-login' }, 'Quick pairing finds a player near your rating; it is for players. ',
        h('a', { href: '#/login' }, 'Log in or register a name'), ' first, or ',
        h('a', { href: '#/new' }, 'play a bot or a friend as a guest'), '.'));
      return;
    }
    games().then((list) => this.build(list)).catch((e) => this.root.append(h('p', { class: 'error' }, e.message)));
  }

  stop() { if (this.abort) this.abort.abort(); }

  build(list) {
    this.game = h('select', { id: 'pair-game' }, list.map((g) => h('option', { value: g.name }, g.title)));
    this.clock = h('select', { id: 'pair-clock' }, clockChoices());
    const rated = ratedBox('pair-rated');
    this.rated = rated.input;
    this.startButton = h('button', { type: 'submit', id: 'pair-start' }, 'Find an opponent');
    this.cancelButton = h('button', { type: 'button', id: 'pair-cancel', hidden: true, onclick: () => this.cancel() }, 'Stop looking');
    this.state = h('p', { id: 'pair-status', role: 'status', 'aria-live': 'polite' });
    this.offer = h('div', { id: 'pair-offer', class: 'buttons' });
    this.error = h('p', { class: 'error', role: 'alert' });
    const label = (text, control) => h('label', {}, h('span', {}, text), control);
    this.root.append(h('form', { class: 'new-form', onsubmit: (e) => { e.preventDefault(); this.start(); } },
      label('Game', this.game), label('Clocks', this.clock),
      rated.row,
      h('div', { class: 'buttons' }, this.startButton, this.cancelButton)),
    this.state, this.offer, this.error);
  }

  body() {
    return { game: this.game.value, clock: clockOf(this.clock.value), casual: !this.rated.checked };
  }

  async start() {
    this.error.textContent = '';
    this.offer.replaceChildren();
    this.startButton.hidden = true;
    this.cancelButton.hidden = false;
    this.state.textContent = 'Looking for an opponent…';
    this.abort = new AbortController();
    const title = gameTitle(this.game.value);
    try {
      const res = await fetch('/api/pair', {
        method: 'POST', signal: this.abort.signal, body: JSON.stringify(this.body()),
        headers: { 'Content-Type': 'application/json', Authorization: `Player ${me.get().key}` },
      });
      if (!res.ok) {
        const data = await res.json().catch(() => ({}));
        throw new Error(data.error || `the server answered ${res.status}`);
      }
      for await (const { event, data } of serverEvents(res)) {
        if (event === 'waiting') {
          this.state.textContent = `Looking for an opponent in ${title}: ${formatWait(data.waited_ms)} so far, ` +
            `accepting ratings within ±${data.rating_gap} of yours.`;
        } else if (event === 'bot_offer') {
          this.offer.replaceChildren(h('span', {}, 'Nobody near your rating yet.'),
            h('button', { type: 'button', id: 'pair-bot', onclick: () => this.playBot(data.level) },
              `Play bot:${data.level} (${data.rating}) instead`));
        } else if (event === 'paired') {
          seats.put(data.id, data.seat, data.token);
          this.paired = true;
          location.hash = `#/m/${data.id}`;
          return;
        } else if (event === 'failed') {
          throw new Error(data.error);
        }
      }
      throw new Error('the pairing ended without a match; try again');
    } catch (e) {
      if (e.name === 'AbortError') return;
      this.error.textContent = e.message;
      this.state.textContent = '';
      this.startButton.hidden = false;
      this.cancelButton.hidden = true;
    }
  }

  cancel() {
    if (this.abort) this.abort.abort();
    this.state.textContent = 'You left the queue.';
    this.offer.replaceChildren();
    this.startButton.hidden = false;
    this.cancelButton.hidden = true;
  }

  // The bot offer taken: out of the queue, into a match against that level.
  async playBot(level) {
    if (this.abort) this.abort.abort();
    const b = this.body();
    // As the search asked: a casual search plays a casual bot game.
    const body = { game: b.game, seats: [{ bot: false }, { bot: true, level }], take_seat: 0, clock: b.clock, name: me.get().name, casual: b.casual };
    try {
      const out = await api('/api/matches', { method: 'POST', body, player: true });
      seats.put(out.match.id, out.seat, out.token);
      location.hash = `#/m/${out.match.id}`;
    } catch (e) { this.error.textContent = e.message; }
  }
}

// The result of a listed match for `name`: won / lost / drawn / still going, and the rating change.
function resultFor(m, name) {
  const i = m.seats.findIndex((s) => s.player && s.player.toLowerCase() === name.toLowerCase());
  const seat = m.seats[i];
  let outcome = m.status === 'finished' ? 'finished' : m.status === 'waiting' ? 'waiting' : 'in progress';
  // A cancelled or aborted match has no result, though its winner field reads as a draw's.
  const noResult = m.result && ['cancelled', 'aborted'].includes(m.result.reason);
  if (m.result && i >= 0) outcome = noResult ? 'no result' : m.result.winner < 0 ? 'drawn' : m.result.winner === i ? 'won' : 'lost';
  const them = m.seats.filter((_, k) => k !== i).map((s) => s.name || '(open)').join(', ');
  let change = '';
  if (seat && seat.rating > 0 && seat.rating_after > 0) {
    const d = seat.rating_after - seat.rating;
    change = ` · ${seat.rating} → ${seat.rating_after} (${d >= 0 ? '+' : ''}${d})`;
  }
  return { outcome, them, change };
}

class PlayerPage {
  constructor(name) {
    this.root = h('div', { class: 'player-page' }, h('h2', { id: 'player-name' }, name), h('p', {}, 'Loading…'));
    main.appendChild(this.root);
    this.load(name);
  }

  async load(name) {
    try {
      const path = `/api/players/${encodeURIComponent(name)}`;
      const [p, list] = await Promise.all([api(path), api(`${path}/matches?limit=20`)]);
      await games().catch(() => null);
      const since = new Date(p.created_ms).toLocaleDateString();
      const seen = p.last_seen_ms ? new Date(p.last_seen_ms).toLocaleString() : 'never';
      const rows = p.ratings.map((r) => h('tr', { 'data-game': r.game },
        h('td', {}, h('a', { href: `#/top/${r.game}` }, gameTitle(r.game))),
        h('td', { class: 'num', title: `deviation ±${r.deviation}${r.provisional ? ': provisional until it narrows' : ''}` }, ratingText(r.rating, r.provisional)),
        h('td', { class: 'num' }, r.games), h('td', { class: 'num' }, r.wins), h('td', { class: 'num' }, r.draws), h('td', { class: 'num' }, r.losses)));
      const games_ = list.matches.map((m) => {
        const { outcome, them, change } = resultFor(m, p.name);
        return h('li', { 'data-match': m.id }, h('a', { href: `#/m/${m.id}` }, `#${m.id} ${gameTitle(m.spec.name)}`),
          ` against ${them}: `, h('span', { class: `outcome ${outcome.replace(' ', '-')}` }, outcome), change);
      });
      this.root.replaceChildren(
        h('h2', { id: 'player-name' }, p.name, p.bot ? h('span', { class: 'tag' }, 'bot level') : null,
          me.get()?.name.toLowerCase() === p.name.toLowerCase() ? h('span', { class: 'you' }, 'you') : null),
        h('p', { class: 'legend' }, `Player since ${since} · last seen ${seen}. A rating with ? is provisional.`),
        h('h3', {}, 'Ratings'),
        rows.length ? h('table', { id: 'ratings', class: 'table' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Game'), h('th', {}, 'Rating'), h('th', {}, 'Games'), h('th', {}, 'Won'), h('th', {}, 'Drawn'), h('th', {}, 'Lost'))),
          h('tbody', {}, rows)) : h('p', { class: 'empty', id: 'ratings' }, 'No rated games yet.'),
        h('h3', {}, 'Recent games'),
        games_.length ? h('ul', { id: 'player-matches', class: 'plain' }, games_) : h('p', { class: 'empty' }, 'No games yet.'));
    } catch (e) {
      this.root.replaceChildren(h('h2', {}, name), h('p', { class: 'error' }, e.message));
    }
  }
}

class LeaderboardPage {
  constructor(game) {
    this.root = h('div', { class: 'top-page' }, h('h2', {}, 'Leaderboard'));
    main.appendChild(this.root);
    games().then((list) => this.build(list, game || list[0].name))
      .catch((e) => this.root.append(h('p', { class: 'error' }, e.message)));
  }

  async build(list, game) {
    const pick = h('select', { id: 'top-game', 'aria-label': 'Game', onchange: () => { location.hash = `#/top/${pick.value}`; } },
      list.map((g) => h('option', { value: g.name, selected: g.name === game }, g.title)));
    const box = h('div', {}, h('p', {}, 'Loading…'));
    this.root.replaceChildren(h('h2', {}, 'Leaderboard: ', pick), box);
    try {
      const { entries } = await api(`/api/leaderboard?game=${encodeURIComponent(game)}&limit=50`);
      box.replaceChildren(entries.length ? h('table', { id: 'leaderboard', class: 'table' },
        h('thead', {}, h('tr', {}, h('th', {}, '#'), h('th', {}, 'Player'), h('th', {}, 'Rating'), h('th', {}, 'Games'))),
        h('tbody', {}, entries.map((e) => h('tr', { 'data-player': e.name },
          h('td', { class: 'num' }, e.rank), h('td', {}, playerLink(e.name), e.bot && !e.name.startsWith('bot:') ? h('span', { class: 'tag' }, 'bot') : null),
          h('td', { class: 'num', title: `deviation ±${e.deviation}` }, e.rating), h('td', { class: 'num' }, e.games)))))
        : h('p', { class: 'empty' }, `No settled ratings in ${gameTitle(game)} yet: a rating shows here once its deviation is narrow enough.`),
      h('p', { class: 'legend' }, 'People and bot levels on one scale (Glicko-2).'));
    } catch (e) {
      box.replaceChildren(h('p', { class: 'error' }, e.message));
    }
  }
}
