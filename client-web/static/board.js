// Boards as SVG, for every game ply offers. The gateway sends a position as rows of cell codes
// ('0' empty, '1'/'2' a piece of the first/second player, '3'/'4' their kings, '#' a wall, ' ' no
// cell), and with the game list each game's look (its kLook, engine/core/board_look.h: how cells
// are named, what is drawn under the pieces, the pieces' shape, the colours). This file knows
// those few kinds of board and nothing of any game's rules or name. The two sides differ in shape
// as well as colour: a plain piece for the first player, a piece with a ring for the second (X
// and O for crosses and noughts).

const NS = 'http://www.w3.org/2000/svg';
const CELL = 40;

function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (parent) parent.appendChild(e);
  return e;
}

// Whether a #rrggbb colour is dark (its ring mark is then drawn light).
function isDark(hex) {
  const n = parseInt(hex.slice(1), 16);
  return 0.3 * (n >> 16) + 0.59 * ((n >> 8) & 255) + 0.11 * (n & 255) < 128;
}

const letter = (i) => String.fromCharCode(97 + i);

// Each game's look, by name, as the game list gave it (setLooks); a plain one for a game not
// (yet) listed.
const LOOKS = new Map();
const PLAIN = {
  cell_names: 'letter-row-down', board: 'squares', piece_shape: 'stones', background: '#fbfbfb',
  empty: '#fbfbfb', first: '#151515', second: '#f7f7f7', lines: '#333333', coordinates: '#333333',
  flip_for_first_seat: false,
};
export function setLooks(games) {
  for (const g of games || []) if (g.look) LOOKS.set(g.name, { ...PLAIN, ...g.look });
}
export function lookOf(game) { return LOOKS.get(game) || PLAIN; }

// The notation's name of the cell at row r (0 = top) and column c of `rows`.
export function cellName(game, rows, r, c) {
  const h = rows.length;
  switch (lookOf(game).cell_names) {
    case 'column': return String(c + 1);
    case 'letter-row-up': return letter(c) + (h - r);
    case 'dark-squares': return String(r * 4 + Math.floor(c / 2) + 1);
    default: return letter(c) + (r + 1);  // letter-row-down: a1 top-left
  }
}

// The look's colours; the shapes, not these, are what tell the sides apart.
function paletteOf(look) {
  return { bg: look.background, empty: look.empty, p1: look.first, p2: look.second,
    line: look.lines, coord: look.coordinates };
}

function piece(g, cx, cy, r, code, pal, look) {
  const side = code === '1' || code === '3' ? 1 : 2;
  const king = code === '3' || code === '4';
  if (look.piece_shape === 'crosses-and-noughts') {
    const s = r * 0.7;
    if (side === 1) {
      el('path', { d: `M${cx - s},${cy - s}L${cx + s},${cy + s}M${cx + s},${cy - s}L${cx - s},${cy + s}`,
        stroke: pal.p1, 'stroke-width': r * 0.28, 'stroke-linecap': 'round', class: 'piece p1' }, g);
    } else {
      el('circle', { cx, cy, r: s, fill: 'none', stroke: pal.p2, 'stroke-width': r * 0.26,
        class: 'piece p2' }, g);
    }
    return;
  }
  const fill = side === 1 ? pal.p1 : pal.p2;
  const edge = side === 1 ? '#000' : '#333';
  el('circle', { cx, cy, r, fill, stroke: edge, 'stroke-width': r * 0.08,
    class: `piece p${side}` }, g);
  // The second side's mark: an inner ring in the other colour.
  if (side === 2) {
    el('circle', { cx, cy, r: r * 0.55, fill: 'none', stroke: isDark(fill) ? '#ccc' : '#555',
      'stroke-width': r * 0.12 }, g);
  }
  if (king) {
    el('path', { d: `M${cx - r * 0.5},${cy + r * 0.25}L${cx - r * 0.5},${cy - r * 0.3}L${cx - r * 0.25},${cy}` +
      `L${cx},${cy - r * 0.45}L${cx + r * 0.25},${cy}L${cx + r * 0.5},${cy - r * 0.3}L${cx + r * 0.5},${cy + r * 0.25}Z`,
      fill: '#d4a017', stroke: '#000', 'stroke-width': r * 0.06, class: 'king' }, g);
  }
}

// The board of `game` for the position `model` ({rows, grid?, hand?}). Options:
//   small      a thumbnail: no coordinates, no interaction marks
//   flip       turned half round (a look's flip_for_first_seat: the first player sees its
//              pieces at the bottom)
//   last       cell names the last move touched (highlighted)
//   selected   cell names picked so far for a move in several clicks
//   targets    cell names that would continue or finish that move
//   cursor     the cell the keyboard is on
//   cylinder   Connect Four whose columns wrap
export function drawBoard(game, model, opts = {}) {
  const rows = model.rows;
  const h = rows.length;
  const w = rows[0].length;
  const look = lookOf(game);
  const pal = paletteOf(look);
  const pad = opts.small ? 4 : 26;
  const ghost = look.board === 'holes' && opts.cylinder ? CELL : 0;
  const width = w * CELL + 2 * pad + 2 * ghost;
  const height = h * CELL + 2 * pad;
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, class: `board board-${game}`,
    role: 'img', 'data-game': game });
  el('rect', { x: 0, y: 0, width, height, fill: pal.bg, rx: 6 }, svg);
  const at = (r, c) => {
    const rr = opts.flip ? h - 1 - r : r;
    const cc = opts.flip ? w - 1 - c : c;
    return [pad + ghost + cc * CELL + CELL / 2, pad + rr * CELL + CELL / 2];
  };
  const marks = el('g', {}, svg);
  drawLines(game, look, marks, rows, at, pal, model, opts);
  if (ghost) drawCylinderGhosts(svg, rows, pad, ghost, pal, look);
  const pieces = el('g', {}, svg);
  const last = new Set(opts.last || []);
  const selected = new Set(opts.selected || []);
  const targets = new Set(opts.targets || []);
  // The analysis's best move here: cells by position ([r, c]), since a Connect Four column's
  // cells share one name and only the one the piece would land in is meant.
  const best = new Set((opts.best || []).map(([r, c]) => `${r},${c}`));
  const win = new Set((opts.win || []).map(([r, c]) => `${r},${c}`));
  const mill = new Set((opts.mill || []).map(([r, c]) => `${r},${c}`));
  for (let r = 0; r < h; r++) {
    for (let c = 0; c < w; c++) {
      const code = rows[r][c];
      if (code === ' ') continue;
      const [x, y] = at(r, c);
      const name = cellName(game, rows, r, c);
      const cell = el('g', { class: 'cell', 'data-cell': name, 'data-r': r, 'data-c': c }, pieces);
      // The whole square takes the click, whatever is drawn in it.
      el('rect', { x: x - CELL / 2, y: y - CELL / 2, width: CELL, height: CELL, fill: 'transparent' }, cell);
      if (code === '#') {
        el('rect', { x: x - CELL / 2 + 3, y: y - CELL / 2 + 3, width: CELL - 6, height: CELL - 6,
          fill: '#555', class: 'wall' }, cell);
        el('path', { d: `M${x - 12},${y - 12}L${x + 12},${y + 12}M${x + 12},${y - 12}L${x - 12},${y + 12}`,
          stroke: '#999', 'stroke-width': 3 }, cell);
        continue;
      }
      if (look.board === 'holes') el('circle', { cx: x, cy: y, r: CELL * 0.4, fill: pal.empty }, cell);
      if (look.board === 'morris' && code === '0') el('circle', { cx: x, cy: y, r: 5, fill: pal.empty }, cell);
      if (code !== '0') {
        // Draughts' pieces leave the square's corner to its number.
        const size = look.board === 'intersections' ? 0.44 : look.board === 'dark-squares' ? 0.33 : 0.38;
        piece(cell, x, y, CELL * size, code, pal, look);
      }
      if (!opts.small && last.has(lastKey(game, name, r))) {
        el('rect', { x: x - CELL / 2 + 2, y: y - CELL / 2 + 2, width: CELL - 4, height: CELL - 4,
          fill: 'none', stroke: '#ff8c00', 'stroke-width': 3, 'stroke-dasharray': '6 3', class: 'last' }, cell);
      }
      if (selected.has(name)) {
        el('rect', { x: x - CELL / 2 + 1, y: y - CELL / 2 + 1, width: CELL - 2, height: CELL - 2,
          fill: 'none', stroke: '#0a7cff', 'stroke-width': 4, class: 'selected' }, cell);
      }
      if (targets.has(name)) {
        el('circle', { cx: x, cy: y, r: 6, fill: '#0a7cff', stroke: '#fff', 'stroke-width': 2,
          class: 'target' }, cell);
      }
      if (win.has(`${r},${c}`)) {
        el('circle', { cx: x, cy: y, r: CELL * 0.45, fill: 'none', stroke: '#ffd400', 'stroke-width': 4,
          class: 'win', 'data-win': name }, cell);
      }
      if (mill.has(`${r},${c}`)) {
        el('circle', { cx: x, cy: y, r: CELL * 0.36, fill: 'none', stroke: '#ffd400', 'stroke-width': 4,
          class: 'mill', 'data-mill': name }, cell);
      }
      if (best.has(`${r},${c}`)) {
        el('circle', { cx: x, cy: y, r: CELL * 0.3, fill: 'none', stroke: '#1d8a3a', 'stroke-width': 5,
          'stroke-dasharray': '7 4', class: 'best', 'data-best': name }, cell);
      }
      if (opts.cursor && opts.cursor[0] === r && opts.cursor[1] === c) {
        el('rect', { x: x - CELL / 2 + 4, y: y - CELL / 2 + 4, width: CELL - 8, height: CELL - 8,
          fill: 'none', stroke: '#000', 'stroke-width': 2, 'stroke-dasharray': '2 2', class: 'cursor' }, cell);
      }
    }
  }
  if (!opts.small) drawCoordinates(svg, game, look, rows, at, pad, pal);
  return svg;
}

// Where a move names a column (Connect Four), the highlight is the cell, so it is keyed by row too.
function lastKey(game, name, r) { return lookOf(game).cell_names === 'column' ? `${name}@${r}` : name; }

// The names the last move touched: every cell that differs between two positions.
export function changedCells(game, before, after) {
  const out = [];
  if (!before || !after || before.rows.length !== after.rows.length) return out;
  for (let r = 0; r < after.rows.length; r++) {
    for (let c = 0; c < after.rows[r].length; c++) {
      if (before.rows[r][c] !== after.rows[r][c]) {
        out.push(lastKey(game, cellName(game, after.rows, r, c), r));
      }
    }
  }
  return out;
}

function drawLines(game, look, g, rows, at, pal, model, opts) {
  const h = rows.length;
  const w = rows[0].length;
  const line = (a, b, width = 2) => {
    const [x1, y1] = at(...a);
    const [x2, y2] = at(...b);
    el('line', { x1, y1, x2, y2, stroke: pal.line, 'stroke-width': width }, g);
  };
  if (look.board === 'intersections') {
    for (let r = 0; r < h; r++) line([r, 0], [r, w - 1], 1);
    for (let c = 0; c < w; c++) line([0, c], [h - 1, c], 1);
  } else if (look.board === 'morris') {
    for (const k of [0, 1, 2]) {
      const e = 6 - k;
      line([k, k], [k, e]); line([k, e], [e, e]); line([e, e], [e, k]); line([e, k], [k, k]);
    }
    line([0, 3], [2, 3]); line([4, 3], [6, 3]); line([3, 0], [3, 2]); line([3, 4], [3, 6]);
  } else if (look.board === 'dark-squares') {
    for (let r = 0; r < h; r++) {
      for (let c = 0; c < w; c++) {
        if (rows[r][c] === ' ') continue;
        const [x, y] = at(r, c);
        el('rect', { x: x - CELL / 2, y: y - CELL / 2, width: CELL, height: CELL, fill: pal.empty }, g);
        if (!opts.small) {
          el('text', { x: x - CELL / 2 + 1.5, y: y - CELL / 2 + 8, 'font-size': 8, fill: pal.bg, class: 'square-number' }, g)
            .textContent = cellName(game, rows, r, c);
        }
      }
    }
  } else if (look.board !== 'holes') {
    for (let r = 0; r < h; r++) {
      for (let c = 0; c < w; c++) {
        const [x, y] = at(r, c);
        el('rect', { x: x - CELL / 2, y: y - CELL / 2, width: CELL, height: CELL, fill: 'none',
          stroke: pal.line, 'stroke-width': 1 }, g);
      }
    }
  }
  // Tic-Tac-Two's 3x3 grid: only inside it do three in a row count.
  if (model.grid) {
    const [c0, r0, c1, r1] = model.grid;
    const [xa, ya] = at(r0, c0);
    const [xb, yb] = at(r1, c1);
    const x = Math.min(xa, xb) - CELL / 2;
    const y = Math.min(ya, yb) - CELL / 2;
    el('rect', { x, y, width: Math.abs(xb - xa) + CELL, height: Math.abs(yb - ya) + CELL,
      fill: '#dde8f6', stroke: '#1b4f9c', 'stroke-width': 4, class: 'grid' }, g);
    for (let r = 0; r < h; r++) {
      for (let c = 0; c < w; c++) {
        const [cx, cy] = at(r, c);
        el('rect', { x: cx - CELL / 2, y: cy - CELL / 2, width: CELL, height: CELL, fill: 'none',
          stroke: pal.line, 'stroke-width': 1 }, g);
      }
    }
  }
}

// A cylinder's columns wrap: the last column is shown faded left of the first, and the first
// right of the last.
function drawCylinderGhosts(svg, rows, pad, ghost, pal, look) {
  const h = rows.length;
  const w = rows[0].length;
  const g = el('g', { opacity: 0.35, class: 'wrap' }, svg);
  for (let r = 0; r < h; r++) {
    for (const [from, x] of [[w - 1, pad + ghost / 2], [0, pad + ghost + w * CELL + ghost / 2]]) {
      const y = pad + r * CELL + CELL / 2;
      const code = rows[r][from];
      el('circle', { cx: x, cy: y, r: CELL * 0.4, fill: pal.empty }, g);
      if (code !== '0') piece(g, x, y, CELL * 0.38, code, pal, look);
    }
  }
  el('text', { x: pad + 2, y: pad - 8, 'font-size': 12, fill: '#fff' }, svg).textContent = '⟲ columns wrap ⟳';
}

function drawCoordinates(svg, game, look, rows, at, pad, pal) {
  const h = rows.length;
  const w = rows[0].length;
  const text = (x, y, s) => {
    const t = el('text', { x, y, 'font-size': 12, 'text-anchor': 'middle', 'dominant-baseline': 'middle',
      fill: pal.coord, class: 'coord' }, svg);
    t.textContent = s;
  };
  if (look.cell_names === 'dark-squares') return;  // squares carry their numbers
  if (look.cell_names === 'column') {
    for (let c = 0; c < w; c++) {
      const [x, y] = at(h - 1, c);
      text(x, y + CELL / 2 + pad / 2, String(c + 1));
    }
    return;
  }
  for (let c = 0; c < w; c++) {
    const [x] = at(0, c);
    const [, yTop] = at(0, 0);
    const [, yBottom] = at(h - 1, 0);
    text(x, Math.max(yTop, yBottom) + CELL / 2 + pad / 2 - 2, letter(c));
  }
  for (let r = 0; r < h; r++) {
    const [, y] = at(r, 0);
    const [xa] = at(0, 0);
    const [xb] = at(0, w - 1);
    const label = cellName(game, rows, r, 0).replace(/^[a-z]/, '');
    text(Math.min(xa, xb) - CELL / 2 - pad / 2 + 2, y, label);
  }
}

// The line that won a game of lines (four in Connect Four, five or more in Gomoku, three in
// Tic-Tac-Toe), as the cells [r, c] of every such run on the board; none for other games.
const RUNS = { connect4: 4, gomoku: 5, tictactoe: 3 };
export function winningCells(game, model, cylinder) {
  const k = RUNS[game];
  const rows = model && model.rows;
  if (!k || !rows) return [];
  const h = rows.length;
  const w = rows[0].length;
  const out = new Map();
  const at = (r, c) => {
    if (r < 0 || r >= h) return null;
    if (cylinder) c = ((c % w) + w) % w;
    else if (c < 0 || c >= w) return null;
    return [r, c];
  };
  for (let r = 0; r < h; r++) {
    for (let c = 0; c < w; c++) {
      const code = rows[r][c];
      if (code !== '1' && code !== '2') continue;
      for (const [dr, dc] of [[0, 1], [1, 0], [1, 1], [1, -1]]) {
        const run = [];
        for (let i = 0; i < Math.max(h, w); i++) {
          const p = at(r + dr * i, c + dc * i);
          if (!p || rows[p[0]][p[1]] !== code) break;
          run.push(p);
        }
        if (run.length >= k) for (const p of run) out.set(`${p[0]},${p[1]}`, p);
      }
    }
  }
  return [...out.values()];
}

// Nine Men's Morris: the mill a move just closed (the move took a piece), as [r, c] cells of
// the 7x7 grid; none for another game or move. A row or column of the grid holds one line of
// three points, or two (either side of the centre) in its middle row and column.
export function closedMill(game, before, after) {
  if (game !== 'morris' || !before || !after || !before.rows || !after.rows) return [];
  const b = before.rows;
  const a = after.rows;
  if (a.length !== 7 || b.length !== 7) return [];
  const count = (rows, code) => rows.reduce((n, row) => n + [...row].filter((x) => x === code).length, 0);
  let to = null;
  for (let r = 0; r < 7; r++) {
    for (let c = 0; c < 7; c++) {
      if ((a[r][c] === '1' || a[r][c] === '2') && b[r][c] !== a[r][c]) to = [r, c];
    }
  }
  if (!to) return [];
  const code = a[to[0]][to[1]];
  const other = code === '1' ? '2' : '1';
  // Only a move that took a piece closed a mill.
  if (count(a, other) >= count(b, other)) return [];
  const out = [];
  const lineOf = (cells) => {
    const points = cells.filter(([r, c]) => a[r][c] !== ' ');
    if (points.length === 3 && points.every(([r, c]) => a[r][c] === code)) out.push(...points);
  };
  const [r, c] = to;
  const half = (i) => (i === 3 ? null : i < 3 ? [0, 1, 2] : [4, 5, 6]);
  const cols = r === 3 ? half(c) : [0, 1, 2, 3, 4, 5, 6];
  const rows = c === 3 ? half(r) : [0, 1, 2, 3, 4, 5, 6];
  if (cols) lineOf(cols.map((x) => [r, x]));
  if (rows) lineOf(rows.map((y) => [y, c]));
  return out;
}
