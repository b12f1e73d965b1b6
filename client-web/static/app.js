// ply in the browser: the live list, a match to watch or play, a new match, and the replay of a
// finished one. Talks only to the ply-web that served it (/api/...). Text from the network is
// only ever put into the page as text (no innerHTML), and a seat's token lives in this browser's
// localStorage alone: it goes out only in the Authorization header of this seat's own moves.
import { drawBoard, changedCells, setLooks, lookOf } from './board.js';

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

async function api(path, { method = 'GET', body, token, keepalive = false } = {}) {
  const headers = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(path, { method, headers, keepalive, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = {};
  try { data = await res.json(); } catch { /* an empty or non-JSON answer */ }
  if (!res.ok) throw Object.assign(new Error(data.error || `the server answered ${res.status}`), { status: res.status });
  return data;
}

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
  else current = new ListPage();
  main.focus({ preventScroll: true });
}
window.addEventListener('hashchange', route);
// The first page waits for the game list: every board is drawn from its game's look.
window.addEventListener('DOMContentLoaded', () => {
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

function card(m) {
  const who = m.seats.map((s) => s.taken ? s.name + (s.guest ? ' (guest)' : '') : '(open)').join(' vs ');
  const status = m.status === 'finished' ? (m.result ? m.result.text : 'finished')
    : m.status === 'waiting' ? 'waiting for a player' : `${m.plies} moves`;
  return h('a', { class: 'card', href: `#/m/${m.id}`, 'data-match': m.id },
    m.board ? drawBoard(m.spec.name, m.board, { small: true, cylinder: m.spec.options.cylinder === 'true' })
      : h('div', { class: 'noboard' }),
    h('span', { class: 'card-title' }, `#${m.id} ${gameTitle(m.spec.name)}`),
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
    const form = h('form', { class: 'new-form', onsubmit: (e) => { e.preventDefault(); this.create(name.value, clock.value); } },
      label('Game', game), this.options, label('Against', opponent), this.botRow, this.bot2Row,
      this.sideRow, this.nameRow, label('Clocks', clock),
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
    if (clock) {
      const [initial, increment] = clock.split('+').map(Number);
      body.clock = { initial_s: initial, increment_s: increment };
    }
    try {
      const out = await api('/api/matches', { method: 'POST', body });
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
    this.selection = [];
    this.cursor = [0, 0];
    this.replay = null;
    // For tests and curious people: when each move arrived, and how many whole snapshots came
    // (one, unless the stream had to start over rather than resume).
    this.trace = (window.plyTrace = []);
    window.plySnapshots = 0;
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
    clearInterval(this.tick);
    clearTimeout(this.pollTimer);
    clearTimeout(this.rematchTimer);
    if (this.es) this.es.close();
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
    main.appendChild(h('div', { class: 'match-page' },
      h('div', { class: 'board-col' }, this.title, this.status, this.presence, this.connection, this.boardBox, this.extra, this.typeForm, this.notice, this.replayBox),
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
      const data = JSON.parse(e.data);
      this.moves = data.moves;
      this.applyState(data, false);
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

  async poll() {
    try {
      const view = this.mine ? '?view=player' : '';
      const full = await api(`/api/matches/${this.id}${view}`);
      this.connection.textContent = 'Live updates are not available; the page asks every two seconds.';
      this.moves = full.moves;
      this.applyState(full, true);
      if (full.status !== 'finished') this.pollTimer = setTimeout(() => this.poll(), 2000);
    } catch (e) {
      this.status.textContent = e.message;
    }
  }

  // The match page of a player is a spectator's once the match is over: every bot's search.
  async finished() {
    try {
      const full = await api(`/api/matches/${this.id}`);
      this.moves = full.moves;
      this.applyState(full, false);
    } catch { /* the stream's last state stays */ }
  }

  applyState(st, diff) {
    if (diff && this.state && st.board && this.state.board && st.plies !== this.state.plies) {
      this.last = changedCells(st.spec.name, this.state.board, st.board);
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
        this.moves = full.moves;
        this.applyState(full, false);
      } catch { this.rematchTimer = null; }
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
      this.moves = out.match.moves;
      this.applyState(out.match, false);
    } catch (e) {
      this.notice.textContent = `No rematch: ${e.message}`;
    }
  }

  async claim(draw) {
    try {
      const out = await api(`/api/matches/${this.id}/claim`, { method: 'POST', token: this.mine.token, body: { draw } });
      this.moves = out.match.moves;
      this.applyState(out.match, false);
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
      const out = await api(`/api/matches/${this.id}/join`, { method: 'POST', body: { seat, name: name || 'guest' } });
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
  }

  statusText() {
    const st = this.state;
    if (this.replay) {
      const result = st.result ? ` (${st.result.text})` : '';
      const judged = this.replay.analysis && this.replay.analysis.moves[this.replay.index - 1];
      const verdict = judged
        ? ` · ${judged.mark ? `${judged.mark} ` : ''}${judged.before} → ${judged.after} for the mover, best ${judged.best}${judged.exact ? ' (exact)' : ''}`
        : '';
      return `Replay: position after ${this.replay.index} of ${this.replay.boards.length - 1} moves${result}${verdict}`;
    }
    if (st.status === 'finished') return `Game over: ${st.result ? st.result.text : 'finished'}`;
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
    const targets = path.length
      ? legal.filter((m) => m.cells && path.every((c, i) => m.cells[i] === c)).map((m) => m.cells[path.length])
      : [];
    const svg = drawBoard(this.game, board, {
      flip: this.flipped(),
      last: this.replay ? this.replayLast() : this.last,
      selected: path,
      targets,
      cursor: document.activeElement === this.boardBox ? this.cursor : null,
      cylinder: this.state.spec.options.cylinder === 'true',
    });
    svg.setAttribute('aria-label', `${gameTitle(this.game)} board`);
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

  drawSeats() {
    const st = this.state;
    this.seatsBox.replaceChildren(...st.seats.map((s, i) => h('div', {
      class: `seat${st.to_move === i && st.status === 'active' ? ' to-move' : ''}`, 'data-seat': i + 1 },
    sideGlyph(this.game, i),
    h('span', { class: 'seat-side' }, `${s.side} · ${seatLabel(i)}`),
    h('span', { class: 'seat-name' }, s.taken ? s.name : '(open)'),
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
      items.push(name);
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
      const judged = this.replay && this.replay.analysis && this.replay.analysis.moves[m.ply - 1];
      const mark = judged && judged.mark
        ? h('span', { class: 'mark', title: `best ${judged.best}${judged.exact ? ' (exact)' : ''}` }, judged.mark) : null;
      const li = h('li', { 'data-ply': m.ply, class: this.replay && this.replay.index === m.ply ? 'current' : '' },
        h('span', { class: 'mv-side' }, side), ' ', h('span', { class: 'mv' }, m.move), mark ? ' ' : null, mark, bot ? ' ' : null, bot);
      if (this.replay) li.addEventListener('click', () => this.step(m.ply - this.replay.index));
      return li;
    });
    const atEnd = this.moveList.scrollTop + this.moveList.clientHeight >= this.moveList.scrollHeight - 4;
    this.moveList.replaceChildren(...items);
    if (atEnd && !this.replay) this.moveList.scrollTop = this.moveList.scrollHeight;
  }

  async startReplay() {
    try {
      const data = await api(`/api/matches/${this.id}/replay`);
      this.moves = data.moves;
      this.replay = { boards: data.boards, index: 0, analysis: data.analysis || null };
      this.replayBox.replaceChildren(
        h('button', { type: 'button', id: 'rp-first', 'aria-label': 'Start', onclick: () => this.step(-1e9) }, '|◀'),
        h('button', { type: 'button', id: 'rp-prev', 'aria-label': 'Back one move', onclick: () => this.step(-1) }, '◀'),
        h('button', { type: 'button', id: 'rp-next', 'aria-label': 'Forward one move', onclick: () => this.step(1) }, '▶'),
        h('button', { type: 'button', id: 'rp-last', 'aria-label': 'End', onclick: () => this.step(1e9) }, '▶|'),
        h('button', { type: 'button', id: 'rp-exit', onclick: () => { this.leaveAnalysis(); this.replay = null; this.replayBox.replaceChildren(); this.render(); } }, 'Leave the replay'));
      if (data.analysis) {
        // Each player's accuracy and marks, under the replay's buttons.
        for (const p of data.analysis.players || []) {
          const seat = this.state.seats[p.seat];
          const who = seat ? `${seat.side}${seat.name ? ` (${seat.name})` : ''}` : seatLabel(p.seat);
          this.replayBox.append(h('p', { class: 'accuracy' },
            `${who}: accuracy ${p.accuracy.toFixed(1)}%, ${counted(p.inaccuracies, 'inaccuracy', 'inaccuracies')} (?!), ` +
            `${counted(p.mistakes, 'mistake', 'mistakes')} (?), ${counted(p.blunders, 'blunder', 'blunders')} (??)`));
        }
      } else {
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
    const es = new EventSource(`/api/matches/${this.id}/analysis`);
    this.analysing = es;
    const finish = (text) => {
      es.close();
      if (this.analysing === es) this.analysing = null;
      if (text !== undefined) {
        box.textContent = text;
        if (button) button.disabled = false;
      }
    };
    es.addEventListener('progress', (e) => { box.textContent = progressText(JSON.parse(e.data)); });
    es.addEventListener('failed', (e) => finish(JSON.parse(e.data).error));
    es.addEventListener('done', async () => {
      finish();
      const at = this.replay ? this.replay.index : 0;
      await this.startReplay();
      if (this.replay) this.step(at);
    });
    es.onerror = () => { if (this.analysing === es) finish('the connection to the server broke; try again'); };
  }

  leaveAnalysis() {
    if (this.analysing) this.analysing.close();
    this.analysing = null;
  }

  step(delta) {
    if (!this.replay) return;
    const n = this.replay.boards.length - 1;
    this.replay.index = Math.max(0, Math.min(n, this.replay.index + delta));
    this.render();
  }
}
