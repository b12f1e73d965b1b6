// What a person does with the ply page, in Debian's Chromium driven by playwright-core. Run by
// tests/web_browser_test.cc, which starts the stack (PostgreSQL, bots, lobby, ply-web), picks the
// scenario and checks what this prints (one JSON object on the last line of stdout) against the
// lobby.
//
//   node scenarios.mjs SCENARIO BASE_URL OUT_DIR [ARGS...]
//
// Nothing is downloaded: the browser is /usr/bin/chromium (or $PLY_CHROMIUM), with the flags this
// machine's closed network needs.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';

const [scenario, base, outDir, ...args] = process.argv.slice(2);
const TIMEOUT = 30000;

async function launch() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ply-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.PLY_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    chromiumSandbox: false,
    viewport: { width: 1100, height: 900 },
    args: ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  context.setDefaultTimeout(TIMEOUT);
  const close = async () => {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return { context, close };
}

// The page's console errors fail the scenario: a script error would otherwise pass silently.
function watchErrors(page, errors) {
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error' && !/Failed to load resource|net::ERR_/.test(m.text())) errors.push(m.text()); });
}

async function newPage(context, errors) {
  const page = await context.newPage();
  watchErrors(page, errors);
  return page;
}

// A page of the seat holder: the seat's token saved as the page keeps it, then the match opened.
// `prepare(page)`, when given, runs first (init scripts that must be in before the page loads).
async function openSeat(context, errors, id, seat, token, prepare) {
  const page = await newPage(context, errors);
  if (prepare) await prepare(page);
  await page.goto(`${base}/`);
  await page.evaluate(([i, s, t]) => localStorage.setItem(`ply.seat.${i}`, JSON.stringify({ seat: s, token: t })),
    [id, Number(seat), token]);
  await page.goto(`${base}/#/m/${id}`);
  return page;
}

// The page's listener never sees one move event of its stream: the first it gets, or the one of
// ply `ply` (1 for the first move) when given. Its ply goes to window.plyLost.
async function loseMoveEvent(page, ply) {
  await page.addInitScript((wanted) => {
      const add = EventTarget.prototype.addEventListener;
      EventSource.prototype.addEventListener = function (type, fn, opts) {
        if (type !== 'move') return add.call(this, type, fn, opts);
        return add.call(this, type, (e) => {
          const p = JSON.parse(e.data).move.ply;
          if (window.plyLost === undefined && (wanted === null || p === wanted)) {
            window.plyLost = p;
            return;
          }
          fn(e);
        }, opts);
      };
  }, ply === undefined ? null : ply);
}

// The page's fetches of URLs that match `pattern` (a RegExp's source) fail as over a dropped
// connection: only once a move event was lost (`afterLoss`), and only for `forMs` after the
// first failure (0: for good). The times of the failures go to window.plyFailed.
async function failFetches(page, pattern, { afterLoss = false, forMs = 0 } = {}) {
  await page.addInitScript(([source, lossFirst, span]) => {
    const realFetch = window.fetch;
    const matches = new RegExp(source);
    window.plyFailed = [];
    window.fetch = function (url, opts) {
      const open = !span || window.plyFailed.length === 0 || performance.now() - window.plyFailed[0] < span;
      if ((!lossFirst || window.plyLost) && open && matches.test(String(url))) {
        window.plyFailed.push(performance.now());
        return Promise.reject(new TypeError('Failed to fetch'));
      }
      return realFetch.call(this, url, opts);
    };
  }, [pattern, afterLoss, forMs]);
}

// Plays `move` at `ply` for the seat whose token is `token`, through the gateway's API, as another
// person's page would.
async function postMove(id, token, ply, move) {
  const res = await fetch(`${base}/api/matches/${id}/move`, { method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ ply, move }) });
  if (!res.ok) throw new Error(`move ${move}: ${res.status} ${await res.text()}`);
}

const statusText = (page) => page.locator('#status').innerText();
const moveCount = (page) => page.locator('#moves li').count();

async function waitStatus(page, re, timeout = TIMEOUT) {
  await page.waitForFunction((src) => new RegExp(src).test(document.querySelector('#status')?.textContent || ''),
    re.source, { timeout });
}

async function waitMoves(page, n, timeout = TIMEOUT) {
  await page.waitForFunction((k) => document.querySelectorAll('#moves li').length >= k || /Game over/.test(document.querySelector('#status')?.textContent || ''),
    n, { timeout });
}

// Creates a match through the API from inside the page (as its own script would), keeping the
// seat in localStorage exactly where the page keeps it.
async function createInPage(page, body) {
  return page.evaluate(async (b) => {
    const res = await fetch('/api/matches', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(b) });
    const out = await res.json();
    if (!res.ok) throw new Error(out.error);
    if (out.token) localStorage.setItem(`ply.seat.${out.match.id}`, JSON.stringify({ seat: out.seat, token: out.token }));
    return out.match.id;
  }, body);
}

// Plays `move` by clicking: each cell it names in turn, or its button.
async function clickMove(page, move) {
  if (move === 'pass' || move.includes(':')) {
    await page.click(`[data-move="${move}"]`);
    return;
  }
  for (const cell of move.split(/[-x]/)) await page.locator(`#board [data-cell="${cell}"]`).first().click();
}

async function legalMoves(page, id) {
  return page.evaluate(async (i) => (await (await fetch(`/api/matches/${i}?view=player`)).json()).legal_moves, id);
}

// On page `a`, alice makes a Connect Four match for a friend (she plays Red; `clock` when given);
// bob opens the shared link in a page of `context` (another browser) and takes Yellow. Bob's page.
async function friendMatch(a, context, errors, clock) {
  await a.goto(`${base}/#/new`);
  await a.selectOption('#game', 'connect4');
  await a.selectOption('#opponent', 'friend');
  await a.selectOption('#side', '0');
  await a.fill('#name', 'alice');
  if (clock) await a.selectOption('#clock', clock);
  await a.click('#create');
  const link = await a.locator('#share').inputValue();
  const b = await newPage(context, errors);
  await b.goto(link);
  await b.fill('#join-name', 'bob');
  await b.click('[data-join="2"]');
  return b;
}

async function shot(page, name) {
  const file = path.join(outDir, `${name}.png`);
  await page.locator('#board').screenshot({ path: file });
  return file;
}

const scenarios = {
  // A spectator watches a match to its end: the moves it shows, and when each arrived.
  async watch(context, errors) {
    const [id] = args;
    const page = await newPage(context, errors);
    await page.goto(`${base}/#/m/${id}`);
    await waitStatus(page, /Game over/, 120000);
    const moves = await page.locator('#moves li .mv').allInnerTexts();
    const trace = await page.evaluate(() => window.plyTrace);
    const snapshots = await page.evaluate(() => window.plySnapshots);
    const botInfo = await page.locator('#moves li .bot').count();
    const botTexts = await page.locator('#moves li').evaluateAll(
      (items) => items.map((li) => li.querySelector('.bot')?.textContent || ''));
    const legend = await page.locator('p.legend').innerText();
    const status = await statusText(page);
    const screenshot = await shot(page, 'watch');
    // The replay: from the start, one move on with the keyboard, and back to the end.
    await page.click('#replay-start');
    await page.waitForSelector('#rp-first');  // the positions have arrived
    await page.keyboard.press('Home');
    const atStart = await statusText(page);
    const startBoard = await page.locator('#board .piece').count();
    await page.keyboard.press('ArrowRight');
    const afterOne = await statusText(page);
    await page.click('#rp-last');
    const atEnd = await statusText(page);
    // A phone: nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await page.screenshot({ path: path.join(outDir, 'watch-phone.png'), fullPage: true });
    const connection = await page.locator('#connection').innerText();
    return { moves, trace, snapshots, connection, botInfo, botTexts, legend, screenshot, status, replay: { atStart, startBoard, afterOne, atEnd }, overflow };
  },

  // A spectator's page that loses one move event of the stream, the first after the page opened
  // (the page's own listener never sees it): the list must not stop there while the board and
  // the status go on. Every time the status changes, the page's list and the state it shows are
  // compared.
  // ARGS: match id.
  async 'watch-gap'(context, errors) {
    const [id] = args;
    const page = await newPage(context, errors);
    await loseMoveEvent(page);
    await page.goto(`${base}/#/m/${id}`);
    await page.waitForFunction(() => document.querySelector('#status')?.textContent);
    await page.evaluate(() => {
      window.plyMismatch = [];
      const seen = () => {
        const shown = document.querySelectorAll('#moves li').length;
        const plies = window.plyPage?.state?.plies;
        if (plies !== undefined && plies !== shown) window.plyMismatch.push({ plies, shown });
      };
      new MutationObserver(seen).observe(document.querySelector('#status'), { childList: true, characterData: true, subtree: true });
    });
    // Before the end (the finished page fetches the whole match anyway): the list grows past
    // the lost move.
    await page.waitForFunction(() => (window.plyLost && document.querySelectorAll('#moves li').length >= window.plyLost + 4) ||
      /Game over/.test(document.querySelector('#status').textContent), null, { timeout: 120000 });
    const before = await moveCount(page);
    const over = /Game over/.test(await statusText(page));
    await waitStatus(page, /Game over/, 120000);
    const moves = await page.locator('#moves li .mv').allInnerTexts();
    return { lost: await page.evaluate(() => window.plyLost || 0), before, overBefore: over, moves, mismatches: await page.evaluate(() => window.plyMismatch) };
  },


  // A spectator's page of a match between two people loses the event of the first move, and the
  // fetches of the whole match it makes in the 1.5 s after the second move shows the gap fail, as
  // over a dropped connection. No third move comes: the page must ask again by itself and show
  // both.
  // ARGS: match id, the two seats' tokens, the two moves.
  async 'catch-up-retry'(context, errors) {
    const [id, token0, token1, move0, move1] = args;
    const page = await newPage(context, errors);
    await loseMoveEvent(page);
    await failFetches(page, String.raw`/api/matches/\d+(\?|$)`, { afterLoss: true, forMs: 1500 });
    await page.goto(`${base}/#/m/${id}`);
    await waitStatus(page, /to move|Your move|Red|Yellow/);
    await postMove(id, token0, 0, move0);
    await page.waitForFunction(() => window.plyLost);
    await postMove(id, token1, 1, move1);
    await page.waitForFunction(() => window.plyFailed.length > 0);
    const failedStatus = await statusText(page);
    let shown = true;
    try {
      await waitMoves(page, 2, 10000);
    } catch { shown = false; }
    return { lost: await page.evaluate(() => window.plyLost), failed: await page.evaluate(() => window.plyFailed.length),
      failedStatus, shown, moves: await page.locator('#moves li .mv').allInnerTexts(), status: await statusText(page) };
  },

  // A seat holder's page loses the event of the match's last move, and the spectator's view of
  // the match cannot be had (every fetch of it fails): the page fills the gap from the seat
  // holder's view, which is finished, and must show the end from it.
  // ARGS: match id, the two seats' tokens, the moves to play (the last one ends the match).
  async 'seat-catch-up-end'(context, errors) {
    const [id, token0, token1, ...moves] = args;
    const page = await openSeat(context, errors, id, 0, token0, async (p) => {
      await loseMoveEvent(p, moves.length);
      await failFetches(p, `/api/matches/${id}$`);
    });
    await waitStatus(page, /Your move/);
    for (let ply = 0; ply < moves.length; ply++) {
      await postMove(id, ply % 2 ? token1 : token0, ply, moves[ply]);
      if (ply < moves.length - 1) await waitMoves(page, ply + 1);
    }
    let over = true;
    try {
      await waitStatus(page, /Game over/, 10000);
    } catch { over = false; }
    await page.waitForFunction(() => window.plyFailed.length > 0, null, { timeout: 5000 }).catch(() => {});
    return { lost: await page.evaluate(() => window.plyLost), refused: await page.evaluate(() => window.plyFailed.length),
      over, moves: await page.locator('#moves li .mv').allInnerTexts(), status: await statusText(page) };
  },

  // Two people, two browsers (separate storage): one creates an open seat and shares the link,
  // the other joins; Red drops four in column 1 while Yellow plays column 2.
  async 'two-players'(context, errors) {
    const second = await launch();
    try {
      const a = await newPage(context, errors);
      const b = await friendMatch(a, second.context, errors, '180+2');
      // Red's clock runs while Red thinks.
      await waitStatus(a, /Your move/);
      const clockBefore = await a.locator('[data-clock="0"]').innerText();
      await a.waitForTimeout(2200);  // the text shows whole seconds and is redrawn every 200 ms
      const clockAfter = await a.locator('[data-clock="0"]').innerText();
      const plan = ['1', '2', '1', '2', '1', '2', '1'];
      for (let i = 0; i < plan.length; i++) {
        const page = i % 2 === 0 ? a : b;
        await waitStatus(page, /Your move/);
        await page.locator(`#board [data-cell="${plan[i]}"]`).first().click();
        await waitMoves(page, i + 1);
      }
      await waitStatus(a, /Game over/);
      await waitStatus(b, /Game over/);
      await shot(a, 'two-players');
      // The four that won, ringed on both boards (column 1's cells, from the bottom).
      const wins = await Promise.all([a, b].map((p) => p.locator('#board [data-win]').evaluateAll((els) => els.map((e) => e.dataset.win))));
      return { wins, clockBefore, clockAfter, a: await statusText(a), b: await statusText(b), tokenShownToB: (await b.content()).includes(await a.evaluate(() => Object.keys(localStorage).map((k) => JSON.parse(localStorage.getItem(k)).token)[0])) };
    } finally {
      await second.close();
    }
  },

  // Two people, two browsers: Bob closes his page on his move; Alice's page counts down and her
  // claim wins once the time has come. She offers a rematch; Bob opens the match again, sees the
  // offer and accepts, and both pages go into the new match on the other sides.
  async 'leave-claim-rematch'(context, errors) {
    const second = await launch();
    try {
      const a = await newPage(context, errors);
      let b = await friendMatch(a, second.context, errors);
      const id = Number(await a.evaluate(() => location.hash.split('/').at(-1)));
      // A claim needs each side to have moved: Red, Yellow, Red, then Bob goes.
      for (const [page, cell, n] of [[a, '4', 1], [b, '4', 2], [a, '3', 3]]) {
        await waitStatus(page, /Your move/);
        await page.locator(`#board [data-cell="${cell}"]`).first().click();
        await waitMoves(page, n);
      }
      await waitStatus(b, /Your move/);
      // Bob closes the page on his move.
      await b.close();
      await a.waitForFunction(() => /left the game - you can claim the win in/.test(document.querySelector('#presence').textContent));
      const waiting = await a.locator('#presence').innerText();
      await a.waitForFunction(() => /claim the win now/.test(document.querySelector('#presence').textContent), null, { timeout: 60000 });
      await a.click('#claim');
      await waitStatus(a, /Game over/);
      const claimed = await statusText(a);
      // Alice offers a rematch and waits; Bob comes back to the match and accepts.
      await a.click('#rematch');
      await a.waitForSelector('#rematch-withdraw');
      const offered = await a.locator('#rematch-state').innerText();
      b = await newPage(second.context, errors);
      await b.goto(`${base}/#/m/${id}`);
      await waitStatus(b, /Game over/);
      await b.waitForSelector('#rematch-accept');
      const offer = await b.locator('#rematch-state').innerText();
      await b.click('#rematch-accept');
      const inRematch = async (page) => {
        await page.waitForFunction((f) => location.hash !== `#/m/${f}`, id);
        await page.waitForFunction(() => document.querySelector('#seats .you') !== null);
        return {
          id: Number(await page.evaluate(() => location.hash.split('/').at(-1))),
          seat: Number(await page.locator('#seats .you').evaluate((e) => e.closest('[data-seat]').dataset.seat)),
        };
      };
      const [ra, rb] = await Promise.all([inRematch(a), inRematch(b)]);
      // Bob has Red now and moves first.
      await waitStatus(b, /Your move/);
      return { id, waiting, claimed, offered, offer, a: ra, b: rb };
    } finally {
      await second.close();
    }
  },

  // A spectator follows a match between bots with the live analysis: the graph grows as the
  // moves come, and once the match is over it is the stored analysis. ARGS: match id.
  async 'live-graph'(context, errors) {
    const [id] = args;
    const page = await newPage(context, errors);
    await page.goto(`${base}/#/m/${id}`);
    await page.click('#live-analyse');
    const points = () => page.locator('#win-graph .pt').count();
    await page.waitForFunction(() => document.querySelectorAll('#win-graph .pt').length >= 3, null, { timeout: 60000 });
    const early = { points: await points(), heading: await page.locator('#analysis h3').innerText(),
      moves: await moveCount(page), pressed: await page.locator('#live-analyse').getAttribute('aria-pressed') };
    await page.waitForFunction((k) => document.querySelectorAll('#win-graph .pt').length >= k || /Game over/.test(document.querySelector('#status').textContent),
      early.points + 2, { timeout: 60000 });
    const later = { points: await points(), heading: await page.locator('#analysis h3').innerText() };
    await waitStatus(page, /Game over/, 120000);
    // The last request makes the stored analysis: accuracies and a point per position.
    await page.waitForFunction(() => document.querySelector('#analysis h3')?.textContent === 'Analysis' &&
      document.querySelectorAll('#win-graph .pt').length === document.querySelectorAll('#moves li').length + 1, null, { timeout: 60000 });
    await page.locator('#analysis').screenshot({ path: path.join(outDir, 'web-live-analysis.png') });
    return { early, later, final: { points: await points(), moves: await moveCount(page),
      accuracy: await page.locator('#analysis .accuracy').count(), text: await page.locator('#analysis').innerText() } };
  },

  // A few clicked moves against a bot in every game; a screenshot of each board.
  async bots(context, errors) {
    const specs = JSON.parse(args[0]);
    const page = await newPage(context, errors);
    await page.goto(`${base}/`);
    const results = [];
    for (const spec of specs) {
      const id = await createInPage(page, { game: spec.game, options: spec.options || {}, name: 'tester',
        seats: [{ bot: false }, { bot: true, level: spec.level }], take_seat: 0 });
      await page.goto(`${base}/#/m/${id}`);
      const played = [];
      for (let k = 0; k < (spec.moves || 3); k++) {
        await waitStatus(page, /Your move|Game over/);
        if (/Game over/.test(await statusText(page))) break;
        const before = await moveCount(page);
        const legal = await legalMoves(page, id);
        // Before anything is picked: the dots the page offers (Reversi's legal moves only).
        if (k === 0) {
          spec.dots = await page.locator('#board .target').evaluateAll((els) => els.map((e) => e.closest('[data-cell]').dataset.cell));
          spec.legal = legal;
        }
        // The move naming the most cells exercises picking a piece, then its target.
        const move = legal.slice().sort((x, y) => y.split(/[-x]/).length - x.split(/[-x]/).length)[k % 2 === 0 ? 0 : legal.length - 1];
        await clickMove(page, move);
        await waitMoves(page, before + 2);
        played.push(move);
      }
      results.push({ label: spec.label, id, played, dots: spec.dots, legal: spec.legal, screenshot: await shot(page, `board-${spec.label}`) });
    }
    return { results };
  },

  // One move clicked in a prepared position (a Morris capture, a draughts multi-jump).
  async 'click-move'(context, errors) {
    const [id, seat, token, move, label, played] = args;
    const page = await openSeat(context, errors, id, seat, token);
    await waitStatus(page, /Your move/);
    // The moves played before the page opened: the status can say "Your move" a moment before
    // the list holds the last of them, and a count taken then named that move as the new one.
    const before = Number(played);
    await waitMoves(page, before);
    await clickMove(page, move);
    await waitMoves(page, before + 1);
    const moves = await page.locator('#moves li .mv').allInnerTexts();
    // A Morris capture: the mill it closed, ringed.
    const mill = await page.locator('#board [data-mill]').evaluateAll((els) => els.map((e) => e.dataset.mill).sort());
    return { last: moves[before], mill, screenshot: await shot(page, `move-${label}`) };
  },

  // A move the lobby refuses (a taken cell) shows the lobby's reason.
  async refused(context, errors) {
    const page = await newPage(context, errors);
    await page.goto(`${base}/`);
    const id = await createInPage(page, { game: 'tictactoe', name: 'tester', seats: [{ bot: false }, { bot: true, level: args[0] }], take_seat: 0 });
    await page.goto(`${base}/#/m/${id}`);
    await waitStatus(page, /Your move/);
    // The first move with the keyboard: from a1, right and down to b2, Enter.
    await page.focus('#board');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await waitMoves(page, 2);
    await waitStatus(page, /Your move/);
    await page.locator('#board [data-cell="b2"]').click();
    await page.waitForFunction(() => /refused/.test(document.querySelector('#notice').textContent));
    const first = await page.locator('#moves li .mv').first().innerText();
    return { first, notice: await page.locator('#notice').innerText() };
  },

  // A reload keeps the seat: the page finds its token and plays on. The token never appears in
  // the page itself.
  async reload(context, errors) {
    const page = await newPage(context, errors);
    await page.goto(`${base}/#/new`);
    await page.selectOption('#game', 'connect4');
    await page.selectOption('#opponent', 'bot');
    await page.selectOption('#level', args[0]);
    await page.click('#create');
    await waitStatus(page, /Your move/);
    await page.locator('#board [data-cell="4"]').first().click();
    await waitMoves(page, 2);
    await page.reload();
    await waitStatus(page, /Your move/);
    const you = await page.locator('.you').count();
    await page.locator('#board [data-cell="4"]').first().click();
    await waitMoves(page, 4);
    const token = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('ply.seat.')).map((k) => JSON.parse(localStorage.getItem(k)).token)[0]);
    const shown = (await page.content()).includes(token);
    return { you, moves: await moveCount(page), tokenInPage: shown };
  },

  // A player whose opponent has left on their move: the notice counts down, a claim made too
  // early shows the lobby's reason, and once the time has come the claim wins.
  // ARGS: match id, this page's seat token (seat 0), the move to play first.
  async claim(context, errors) {
    const [id, token, move] = args;
    const page = await openSeat(context, errors, id, 0, token);
    await waitStatus(page, /Your move/);
    await clickMove(page, move);
    await page.waitForFunction(() => /left the game - you can claim the win in/.test(document.querySelector('#presence').textContent));
    const waiting = await page.locator('#presence').innerText();
    const marked = await page.locator('#seats [data-seat="2"] .away').count();
    await page.click('#claim');
    await page.waitForFunction(() => /Claim refused/.test(document.querySelector('#notice').textContent));
    const refused = await page.locator('#notice').innerText();
    await page.screenshot({ path: path.join(outDir, 'claim-page.png') });
    await page.waitForFunction(() => /claim the win now/.test(document.querySelector('#presence').textContent), null, { timeout: 60000 });
    const ready = await page.locator('#presence').innerText();
    await page.click('#claim');
    await waitStatus(page, /Game over/);
    return { waiting, marked, refused, ready, status: await statusText(page), presenceAfter: await page.locator('#presence').innerText() };
  },

  // A match against a bot, resigned, then Rematch: the bot accepts at once and the page goes
  // into the new match, on the other side.
  async 'rematch-bot'(context, errors) {
    const page = await newPage(context, errors);
    page.on('dialog', (d) => d.accept());
    await page.goto(`${base}/`);
    const first = await createInPage(page, { game: 'connect4', name: 'carol', seats: [{ bot: false }, { bot: true, level: args[0] }], take_seat: 0 });
    await page.goto(`${base}/#/m/${first}`);
    await waitStatus(page, /Your move/);
    await page.click('#resign');
    await waitStatus(page, /Game over/);
    await page.click('#rematch');
    await page.waitForFunction((f) => location.hash !== `#/m/${f}`, first);
    await page.waitForFunction(() => document.querySelector('#seats [data-seat="2"] .you') !== null);
    const second = Number(await page.evaluate(() => location.hash.split('/').at(-1)));
    const stored = await page.evaluate((i) => localStorage.getItem(`ply.seat.${i}`) !== null, second);
    return { first: Number(first), second, stored, status: await statusText(page) };
  },

  // The opponent has offered a rematch after the game: the page shows it with Accept and
  // Decline, and Accept takes the player into the new match. ARGS: match id, seat token (seat 0).
  async 'rematch-accept'(context, errors) {
    const [id, token] = args;
    const page = await openSeat(context, errors, id, 0, token);
    await waitStatus(page, /Game over/);
    await page.waitForSelector('#rematch-accept');
    const offer = await page.locator('#rematch-state').innerText();
    await page.screenshot({ path: path.join(outDir, 'rematch-offer-page.png') });
    const decline = await page.locator('#rematch-decline').count();
    await page.click('#rematch-accept');
    await page.waitForFunction((f) => location.hash !== `#/m/${f}`, id);
    await page.waitForFunction(() => document.querySelector('#seats [data-seat="2"] .you') !== null);
    const second = Number(await page.evaluate(() => location.hash.split('/').at(-1)));
    return { offer, decline, second };
  },

  // The page offers a rematch and waits; once the opponent accepts (elsewhere), the page goes into
  // the new match. ARGS: match id, seat token (seat 0).
  async 'rematch-offer'(context, errors) {
    const [id, token] = args;
    const page = await openSeat(context, errors, id, 0, token);
    await waitStatus(page, /Game over/);
    await page.click('#rematch');
    await page.waitForSelector('#rematch-withdraw');
    const waiting = await page.locator('#rematch-state').innerText();
    await page.waitForFunction((f) => location.hash !== `#/m/${f}`, id);
    await page.waitForFunction(() => document.querySelector('#seats [data-seat="2"] .you') !== null);
    return { waiting, second: Number(await page.evaluate(() => location.hash.split('/').at(-1))) };
  },

  // A spectator replays an analysed match: each judged move carries its mark in the move list,
  // and stepping onto one says its verdict and the best move. ARGS: match id, ply to look at.
  // An analysed match opened later: its graph and accuracies at once, without asking for an
  // analysis; a click on the graph replays that move with the best move drawn on the board.
  async graph(context, errors) {
    const [id, ply] = args;
    const page = await newPage(context, errors);
    await page.goto(`${base}/#/m/${id}`);
    await waitStatus(page, /Game over/);
    await page.waitForSelector('#win-graph');
    const points = await page.locator('#win-graph .pt').count();
    const marked = await page.locator('#win-graph .pt.marked').evaluateAll((els) => els.map((e) => Number(e.dataset.ply)));
    const proven = await page.locator('#win-graph .pt.proven').count();
    const accuracy = await page.locator('#analysis p.accuracy').allInnerTexts();
    const inline = await page.evaluate(() => [...document.querySelectorAll('#moves li')].map((li) => li.querySelector('.mark')?.textContent || ''));
    const analyseButton = await page.locator('#rp-analyse').count();
    const whole = path.join(outDir, 'analysis-graph.png');
    await page.screenshot({ path: whole, fullPage: true });
    await page.locator(`#win-graph .hit[data-ply="${Number(ply) - 1}"]`).click();
    await waitStatus(page, new RegExp(`after ${Number(ply) - 1} of`));
    const best = await page.locator('#best-move').innerText();
    const bestCells = await page.locator('#board [data-best]').evaluateAll((els) => els.map((e) => e.dataset.best));
    const current = await page.locator('#moves li.current').getAttribute('data-ply');
    // The keyboard steps on: the position after the marked move, its verdict in the status.
    await page.keyboard.press('ArrowRight');
    await waitStatus(page, new RegExp(`after ${ply} of`));
    const status = await statusText(page);
    const ringed = await page.locator(`#win-graph .hit[data-ply="${ply}"]`).count();
    const replay = path.join(outDir, 'analysis-best-move.png');
    await page.screenshot({ path: replay, fullPage: true });
    return { points, marked, proven, accuracy, inline, analyseButton, best, bestCells, current, status, ringed,
      screenshots: [whole, replay] };
  },

  // What a first visit costs: the page's own files (HTML, JavaScript, CSS, icon; the API's
  // answers apart) and the time from navigation to the first drawn board of match `id`, in a
  // browser with nothing cached. Then the same page again, as a reload.
  async weight(context, errors) {
    const [id] = args;
    const page = await newPage(context, errors);
    const measure = async (cold) => {
      await page.waitForFunction(() => window.plyBoardDrawnMs !== undefined);
      // The browser asks for the icon after the page, at its own pace (its entry may come after
      // the board is drawn); a cold visit waits for it, up to ten seconds.
      if (cold) {
        await page.waitForFunction(() => performance.getEntriesByType('resource')
          .some((e) => new URL(e.name).pathname === '/favicon.svg'), null, { timeout: 10000 }).catch(() => {});
      }
      return page.evaluate(() => {
        const files = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
          .filter((e) => !new URL(e.name).pathname.startsWith('/api/'))
          .map((e) => ({ name: new URL(e.name).pathname, bytes: e.decodedBodySize, transfer: e.transferSize }));
        return { files, bytes: files.reduce((a, f) => a + f.bytes, 0), boardMs: Math.round(window.plyBoardDrawnMs) };
      });
    };
    await page.goto(`${base}/#/m/${id}`);
    const cold = await measure(true);
    await page.reload();
    const warm = await measure(false);
    return { cold, warm };
  },

  async analysis(context, errors) {
    const [id, ply] = args;
    const page = await newPage(context, errors);
    await page.goto(`${base}/#/m/${id}`);
    await waitStatus(page, /Game over/);
    await page.click('#replay-start');
    await waitStatus(page, /Replay/);
    const marks = await page.evaluate(() => [...document.querySelectorAll('#moves li')].map((li) => li.querySelector('.mark')?.textContent || ''));
    await page.locator(`#moves li[data-ply="${ply}"]`).click();
    await waitStatus(page, new RegExp(`after ${ply} of`));
    return { marks, status: await statusText(page), screenshot: await shot(page, 'analysis-replay') };
  },

  // A spectator replays a match nobody has analysed and asks for the analysis: the page shows
  // the lobby's progress, then each move's mark and each player's accuracy. ARGS: match id.
  async analyse(context, errors) {
    const [id] = args;
    const page = await newPage(context, errors);
    await page.goto(`${base}/#/m/${id}`);
    await waitStatus(page, /Game over/);
    await page.click('#replay-start');
    await waitStatus(page, /Replay/);
    const before = await page.locator('#moves li .mark').count();
    // Every text the progress line shows, however briefly.
    await page.evaluate(() => {
      window.plyProgress = [];
      new MutationObserver(() => {
        const p = document.getElementById('analysis-progress');
        if (p && window.plyProgress.at(-1) !== p.textContent) window.plyProgress.push(p.textContent);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.click('#rp-analyse');
    await page.waitForSelector('p.accuracy', { timeout: 60000 });
    const marks = await page.evaluate(() => [...document.querySelectorAll('#moves li')].map((li) => li.querySelector('.mark')?.textContent || ''));
    const accuracy = await page.locator('p.accuracy').allInnerTexts();
    const progress = await page.evaluate(() => window.plyProgress);
    return { before, marks, accuracy, progress, status: await statusText(page), screenshot: await shot(page, 'analyse') };
  },

  // Two people, each in a browser of their own, register names, ask for a rated game of `game`
  // by quick pairing, play it (two moves each by clicking, then the second resigns) and see
  // both ratings change; then the winner's page and the game's leaderboard.
  async players(context, errors) {
    const [game, suffix] = args;
    const second = await launch();
    try {
      const pages = [await newPage(context, errors), await newPage(second.context, errors)];
      const names = [`alice_${suffix}`, `bob_${suffix}`];
      const keys = [];
      for (let i = 0; i < 2; i++) {
        const page = pages[i];
        page.on('dialog', (d) => d.accept());
        await page.goto(`${base}/#/login`);
        await page.fill('#reg-name', names[i]);
        await page.click('#register');
        await page.waitForSelector('#new-key');
        keys.push(await page.inputValue('#key-text'));
      }
      const corner = await pages[0].locator('#me').innerText();
      let waiting = '';
      for (const page of pages) {
        await page.goto(`${base}/#/pair`);
        await page.selectOption('#pair-game', game);
        await page.click('#pair-start');
        if (!waiting) {
          await page.waitForFunction(() => /Looking for an opponent/.test(document.querySelector('#pair-status')?.textContent || ''));
          waiting = await page.locator('#pair-status').innerText();
        }
      }
      for (const page of pages) await page.waitForURL(/#\/m\/\d+$/);
      const id = Number(pages[0].url().match(/#\/m\/(\d+)$/)[1]);
      const ids = pages.map((p) => Number(p.url().match(/#\/m\/(\d+)$/)[1]));
      await Promise.all(pages.map((p) => p.waitForSelector('#status')));
      const ratingsBefore = await pages[0].locator('#seats .rating').allInnerTexts();
      // Who moves first: the page that says "Your move".
      for (let ply = 0; ply < 4; ply++) {
        let mover = null;
        await Promise.race(pages.map((p, i) => waitStatus(p, /Your move/).then(() => { mover ??= i; })));
        const moves = await legalMoves(pages[mover], id);
        await clickMove(pages[mover], moves[0]);
        await pages[mover].waitForFunction((k) => document.querySelectorAll('#moves li').length >= k, ply + 1);
      }
      // The one to move now resigns (its page asks first: accepted above).
      let loser = null;
      await Promise.race(pages.map((p, i) => waitStatus(p, /Your move/).then(() => { loser ??= i; })));
      await pages[loser].click('#resign');
      for (const page of pages) await waitStatus(page, /Game over/);
      for (const page of pages) await page.waitForFunction(() => document.querySelectorAll('[data-rating-change]').length === 2, null, { timeout: 15000 });
      const changes = await Promise.all(pages.map((p) => p.locator('[data-rating-change]').allInnerTexts()));
      const final = path.join(outDir, 'players-final.png');
      await pages[1 - loser].screenshot({ path: final });
      // The winner's page: the game's rating and the game just played.
      const winner = pages[1 - loser];
      await winner.click('#me-name');
      await winner.waitForSelector(`#ratings tr[data-game="${game}"]`);
      const ratingRow = await winner.locator(`#ratings tr[data-game="${game}"]`).innerText();
      const history = await winner.locator('#player-matches li').allInnerTexts();
      const profile = path.join(outDir, 'player-page.png');
      await winner.screenshot({ path: profile, fullPage: true });
      await winner.click(`#ratings tr[data-game="${game}"] a`);
      await winner.waitForSelector('#leaderboard, .top-page .empty');
      const board = await winner.locator('#leaderboard tbody tr').allInnerTexts();
      const top = path.join(outDir, 'leaderboard.png');
      await winner.screenshot({ path: top, fullPage: true });
      // A player who logs out becomes a guest; the key brings the name back.
      const loserPage = pages[loser];
      await loserPage.goto(`${base}/#/login`);
      await loserPage.click('#logout');
      const afterLogout = await loserPage.locator('#me').innerText();
      await loserPage.fill('#key-name', names[loser]);
      await loserPage.fill('#key-input', keys[loser]);
      await loserPage.click('#use-key');
      await loserPage.waitForSelector('#logout');
      const back = await loserPage.locator('#me').innerText();
      return { names, keys, corner, waiting, id, ids, ratingsBefore, loser, changes, ratingRow, history, board,
        afterLogout, back, screenshots: [final, profile, top] };
    } finally {
      await second.close();
    }
  },
};

const started = Date.now();
const { context, close } = await launch();
const errors = [];
let result;
try {
  result = await scenarios[scenario](context, errors);
  result.errors = errors;
  result.ms = Date.now() - started;
  console.log(JSON.stringify(result));
} catch (e) {
  const page = context.pages().at(-1);
  if (page) await page.screenshot({ path: path.join(outDir, `failure-${scenario}.png`) }).catch(() => {});
  console.log(JSON.stringify({ failed: String(e && e.stack || e), errors }));
  process.exitCode = 1;
} finally {
  await close();
}
