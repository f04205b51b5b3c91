// Live reload latency: the time from writing a stylesheet to (i) the event reaching a client
// and (ii) the browser applying it (the computed style changed), over many saves; and from
// writing a paragraph's new text into index.html to that text showing in the page (folio
// patches it in place; live-server reloads the page). Then both again on a large page (about
// 350 KB, 8,800 elements, distill-shaped: tests/fixtures/large-page.mjs), folio only, with the
// ratio of the page-text edit to the stylesheet swap and where the edit's time goes (the
// client's performance marks, __folioReload.profile). Then the same on that page as distill's
// template serves it (largePage({ distill: true }): custom elements, d-math, and a runtime that
// rewrites the live DOM, as the real Ultra-Scale Playbook page's does).
// A benchmark, not a test: it prints a table and asserts nothing.
//
//   node bench/reload-latency.mjs [--saves 100] [--gap 150] [--no-live-server] [--only large|distill]
//
// folio comes from $FOLIO_BIN or build/src/folio. For the comparison, live-server 1.2.2
// from npm: `npm install --prefix bench` (bench/package.json; node_modules is not committed),
// or $LIVE_SERVER_BIN. Chromium is Debian's (/usr/bin/chromium, or $CHROMIUM_BIN).
//
// Clocks: every time is epoch milliseconds from performance.timeOrigin + performance.now(),
// in node and in the page alike, so they compare to well under a millisecond.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listenEvents } from '../tests/lib/sse.mjs';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { startFolio } from '../tests/lib/folio.mjs';
import { launchBrowser, CHROMIUM_ARGS } from '../tests/lib/browser.mjs';
import { largePage, largeCss, distillTemplate } from '../tests/fixtures/large-page.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.dirname(here);
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const SAVES = Number(opt('--saves', 100));
const GAP_MS = Number(opt('--gap', 150)); // between saves: longer than any debounce, so no coalescing
const WITH_LIVE_SERVER = !argv.includes('--no-live-server');
const ONLY = opt('--only', null); // 'large' or 'distill': that large-page case alone

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- fixture: one page, one stylesheet that changes colour on every save -----------------------
function fixture(page, sheet = css) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-bench-'));
  fs.mkdirSync(path.join(root, 'www'));
  fs.mkdirSync(path.join(root, 'fragments'));
  fs.mkdirSync(path.join(root, 'assets'));
  fs.writeFileSync(path.join(root, 'www/index.html'),
    '<!doctype html><html><head><meta charset=utf-8><title>bench</title>' +
    '<link rel=icon href="data:,"><link rel=stylesheet href=style.css></head>' +
    '<body><h1 id=t>Latency</h1>' + '<p>Some text to lay out.</p>\n'.repeat(200) + '</body></html>\n');
  if (page) fs.writeFileSync(path.join(root, 'www/index.html'), page);
  fs.writeFileSync(path.join(root, 'www/style.css'), sheet(0));
  return root;
}
function textFixture() { return fixture(textPage(0)); }
function css(i) {
  // About the size of a real article's stylesheet (~20 KB), one colour that changes.
  const filler = Array.from({ length: 400 }, (_, k) => `.c${k} { margin: ${k % 7}px; padding: ${k % 5}px; }`).join('\n');
  return `h1 { color: rgb(${i % 256}, ${(i >> 8) % 256}, 7); }\n${filler}\n`;
}
const colour = (i) => `rgb(${i % 256}, ${(i >> 8) % 256}, 7)`;

// In the page: note when the message arrives (EventSource or WebSocket) and when the colour
// is applied (checked on every stylesheet load and every animation frame).
// The page's stream (folio's EventSource, live-server's WebSocket), wrapped once: the probes
// below register in window.__benchStreams the event types they time (a WebSocket's are all
// 'message'), and what to do when it opens. Added before them, as the first init script.
const STREAM_PROBE = () => {
  window.__benchStreams = [];
  const hook = (stream, types) => {
    for (const s of window.__benchStreams) {
      for (const type of types(s)) stream.addEventListener(type, s.note);
      if (s.open) stream.addEventListener('open', s.open);
    }
    return stream;
  };
  if (window.EventSource) {
    const ES = window.EventSource;
    window.EventSource = function (url, init) { return hook(new ES(url, init), (s) => s.types); };
    window.EventSource.prototype = ES.prototype;
    Object.assign(window.EventSource, { CONNECTING: 0, OPEN: 1, CLOSED: 2 });
  }
  if (window.WebSocket) {
    const WS = window.WebSocket;
    window.WebSocket = function (url, protocols) {
      return hook(protocols === undefined ? new WS(url) : new WS(url, protocols), () => ['message']);
    };
    window.WebSocket.prototype = WS.prototype;
  }
};

const PAGE_PROBE = () => {
  window.__bench = { target: null, msg: null, applied: null, opens: 0 };
  const t = () => performance.timeOrigin + performance.now();
  const check = () => {
    const b = window.__bench;
    if (!b.target || b.applied) return;
    const h = document.getElementById('t');
    if (h && getComputedStyle(h).color === b.target) {
      b.applied = t();
      if (window.__benchApplied) window.__benchApplied();
    }
  };
  document.addEventListener('load', check, true);
  (function frame() { check(); requestAnimationFrame(frame); })();
  const note = () => { if (window.__bench.target && !window.__bench.msg) window.__bench.msg = t(); };
  window.__benchStreams.push({ types: ['css', 'fragment', 'reload'], note,
    open: () => { window.__bench.opens++; } });
};

// Node's own SSE listener (folio only): the event reaching a client outside the browser.
function sseListener(url) {
  let waiter = null;
  const arrivals = [];
  // Resolves when the arrival count passes n, or after ms: no polling, no spinning (a spin
  // would take one of the CPUs folio needs and show up in the numbers).
  const wait = (n, ms) => new Promise((resolve) => {
    if (arrivals.length > n) return resolve();
    const timer = setTimeout(() => { waiter = null; resolve(); }, ms);
    waiter = () => { clearTimeout(timer); resolve(); };
  });
  const req = listenEvents(url, (ev) => {
    if (ev.type !== 'css') return;
    arrivals.push(now());
    if (waiter) { waiter(); waiter = null; }
  });
  return { arrivals, wait, close: () => req.destroy() };
}

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  return { n: s.length, median: q(0.5), p90: q(0.9), p99: q(0.99), max: s[s.length - 1], min: s[0] };
}

async function measure({ name, url, root, nodeListener, sheet = css }) {
  // Nothing in the page may be throttled while the bench waits on it.
  const browser = await launchBrowser({
    args: [...CHROMIUM_ARGS, '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
      '--disable-backgrounding-occluded-windows'],
  });
  const page = await (await browser.newContext()).newPage();
  let onApplied = null;
  await page.exposeFunction('__benchApplied', () => { if (onApplied) onApplied(); });
  const noise = [];
  page.on('pageerror', (e) => noise.push(e.message));
  await page.addInitScript(STREAM_PROBE);
  await page.addInitScript(PAGE_PROBE);
  await page.goto(url, { waitUntil: 'load' });
  await sleep(500); // the page's socket/stream is open
  const ears = nodeListener ? sseListener(url) : null;
  await sleep(200);
  const toMsgNode = [], toMsgPage = [], toApplied = [], fromMsg = [];
  let misses = 0;
  for (let i = 1; i <= SAVES; i++) {
    await page.evaluate((c) => { window.__bench = Object.assign(window.__bench, { target: c, msg: null, applied: null }); }, colour(i));
    const before = ears ? ears.arrivals.length : 0;
    const t0 = now();
    fs.writeFileSync(path.join(root, 'www/style.css'), sheet(i));
    const applied = await new Promise((resolve) => {
      const timer = setTimeout(() => { onApplied = null; resolve(false); }, 5000);
      onApplied = () => { clearTimeout(timer); onApplied = null; resolve(true); };
    });
    const r = await page.evaluate(() => window.__bench);
    if (!applied && !r.applied) {
      misses++;
      continue;
    }
    toApplied.push(r.applied - t0);
    if (r.msg) { toMsgPage.push(r.msg - t0); fromMsg.push(r.applied - r.msg); }
    if (ears && ears.arrivals.length > before) toMsgNode.push(ears.arrivals[before] - t0);
    await sleep(GAP_MS + Math.random() * 20);
  }
  if (ears) ears.close();
  const opens = await page.evaluate(() => window.__bench.opens);
  await browser.close();
  return { name, toMsgNode, toMsgPage, toApplied, fromMsg, misses, noise, reconnects: opens - 1 };
}

// (i) alone, with no browser sharing this process's event loop: write, wait for the SSE event.
async function measureStream({ name, url, root }) {
  const ears = sseListener(url);
  await sleep(300);
  const toMsgNode = [];
  let misses = 0;
  for (let i = 1; i <= SAVES; i++) {
    const before = ears.arrivals.length;
    const t0 = now();
    fs.writeFileSync(path.join(root, 'www/style.css'), css(100000 + i));
    await ears.wait(before, 5000);
    if (ears.arrivals.length === before) misses++;
    else toMsgNode.push(ears.arrivals[before] - t0);
    await sleep(GAP_MS + Math.random() * 20);
  }
  ears.close();
  return { name, toMsgNode, toMsgPage: [], toApplied: [], misses, noise: [] };
}

// ---- page text: one paragraph in the middle of a long page changes on every save -----------
function textPage(i) {
  const filler = (k) => `<p>Paragraph ${k}: some text to lay out across the line, as an article has.</p>\n`;
  let body = '';
  for (let k = 0; k < 150; k++) body += filler(k);
  body += `<p id=edited>Version ${i}</p>\n`;
  for (let k = 150; k < 300; k++) body += filler(k);
  return '<!doctype html><html><head><meta charset=utf-8><title>bench</title>' +
    '<link rel=icon href="data:,"><link rel=stylesheet href=style.css></head>' +
    `<body><h1 id=t>Latency</h1>\n${body}</body></html>\n`;
}

// In the page (every navigation): report each new "Version N" that starts #edited, with when
// it showed and when the page's last `page` event (or WebSocket message) arrived.
const TEXT_PROBE = () => {
  const t = () => performance.timeOrigin + performance.now();
  let last = null, msg = null;
  const check = () => {
    const p = document.getElementById('edited');
    const m = p && /^Version \d+/.exec(p.textContent);
    if (m && m[0] !== last) {
      last = m[0];
      if (window.__benchText) window.__benchText(last, t(), msg);
    }
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true });
  document.addEventListener('DOMContentLoaded', check);
  const note = () => { msg = t(); };
  window.__benchStreams.push({ types: ['page'], note });
};

// The client's marks of one patch (folio:event, fetched, indexed, parsed, diffed, applied, placed), as
// the time each stage took; cleared for the next.
const STAGES = ['event', 'fetched', 'indexed', 'parsed', 'diffed', 'applied', 'placed'];
// The fetch of the page's source is split by its resource timing: the wait for the server's
// first byte, and the body.
const takeMarks = (page) => page.evaluate((names) => {
  const at = {};
  for (const e of performance.getEntriesByType('mark')) if (e.name.startsWith('folio:')) at[e.name.slice(6)] = e.startTime;
  performance.clearMarks();
  const out = {};
  const page = performance.getEntriesByType('resource').filter((e) => e.initiatorType === 'fetch' &&
    new URL(e.name).pathname === location.pathname && e.startTime >= at.event).pop();
  if (page) {
    out['fetch: first byte'] = page.responseStart - page.startTime;
    out['fetch: body'] = page.responseEnd - page.responseStart;
  }
  performance.clearResourceTimings();
  let prev = null; // a stage a build does not mark (a whole parse has no 'indexed') counts in the next
  for (const k of names) {
    if (at[k] === undefined) continue;
    if (prev) out[k] = at[k] - at[prev];
    prev = k;
  }
  return out;
}, STAGES);

async function measureText({ name, url, root, source = textPage }) {
  const browser = await launchBrowser({
    args: [...CHROMIUM_ARGS, '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
      '--disable-backgrounding-occluded-windows'],
  });
  const page = await (await browser.newContext()).newPage();
  const seen = new Map();
  let waiting = null;
  await page.exposeFunction('__benchText', (shown, at, msg) => {
    seen.set(shown, { at, msg });
    if (waiting && waiting.text === shown) waiting.resolve();
  });
  let navigations = 0;
  page.on('framenavigated', (f) => { if (f === page.mainFrame()) navigations++; });
  await page.addInitScript(STREAM_PROBE);
  await page.addInitScript(TEXT_PROBE);
  await page.goto(url, { waitUntil: 'load' });
  await sleep(700); // the stream is open and the client knows the page's source
  await page.evaluate(() => { if (window.__folioReload) window.__folioReload.profile = true; });
  const nav0 = navigations;
  const toApplied = [], fromMsg = [], stages = {};
  let misses = 0;
  for (let i = 1; i <= SAVES; i++) {
    const text = `Version ${1000 + i}`;
    const shown = new Promise((resolve) => {
      const timer = setTimeout(() => { waiting = null; resolve(false); }, 5000);
      waiting = { text, resolve: () => { clearTimeout(timer); waiting = null; resolve(true); } };
    });
    const t0 = now();
    fs.writeFileSync(path.join(root, 'www/index.html'), source(1000 + i));
    if (!(await shown)) { misses++; continue; }
    const s = seen.get(text);
    toApplied.push(s.at - t0);
    if (s.msg && s.msg > t0) fromMsg.push(s.at - s.msg);
    const marks = await takeMarks(page).catch(() => ({}));
    for (const [k, v] of Object.entries(marks)) (stages[k] = stages[k] || []).push(v);
    await sleep(GAP_MS + Math.random() * 20);
  }
  const reloads = navigations - nav0;
  await browser.close();
  return { name, toMsgNode: [], toMsgPage: [], toApplied: [], toText: toApplied, fromMsg, stages, misses, noise: [], reloads };
}

// The large page, folio only: stylesheet swaps and page-text edits alternate in one open page
// (scrolled to its middle), so both meet the same machine; one run gives their ratio.
async function measureLarge({ name, url, root, distill = false }) {
  const browser = await launchBrowser({
    args: [...CHROMIUM_ARGS, '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
      '--disable-backgrounding-occluded-windows'],
  });
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
  let onApplied = null, waiting = null;
  const seen = new Map();
  await page.exposeFunction('__benchApplied', () => { if (onApplied) onApplied(); });
  await page.exposeFunction('__benchText', (shown, at, msg) => {
    seen.set(shown, { at, msg });
    if (waiting && waiting.text === shown) waiting.resolve();
  });
  let navigations = 0;
  page.on('framenavigated', (f) => { if (f === page.mainFrame()) navigations++; });
  const noise = [];
  page.on('pageerror', (e) => noise.push(e.message));
  await page.addInitScript(STREAM_PROBE);
  await page.addInitScript(PAGE_PROBE);
  await page.addInitScript(TEXT_PROBE);
  await page.goto(url, { waitUntil: 'load' });
  await sleep(700);
  await page.evaluate(() => {
    window.__folioReload.profile = true;
    window.scrollTo(0, (document.documentElement.scrollHeight - innerHeight) / 2);
  });
  const nav0 = navigations;
  const swap = { toApplied: [], fromMsg: [], toMsg: [] }, edit = { toApplied: [], fromMsg: [], toMsg: [] }, stages = {};
  let misses = 0;
  const within = (set) => new Promise((resolve) => {
    const timer = setTimeout(() => { set(null); resolve(false); }, 5000);
    set(() => { clearTimeout(timer); set(null); resolve(true); });
  });
  for (let i = 1; i <= SAVES; i++) {
    await page.evaluate((c) => { window.__bench = Object.assign(window.__bench, { target: c, msg: null, applied: null }); }, colour(i));
    let t0 = now();
    fs.writeFileSync(path.join(root, 'www/style.css'), largeCss(i));
    const applied = await within((f) => { onApplied = f; });
    const r = await page.evaluate(() => window.__bench);
    if (applied || r.applied) {
      swap.toApplied.push(r.applied - t0);
      if (r.msg) { swap.fromMsg.push(r.applied - r.msg); swap.toMsg.push(r.msg - t0); }
    } else misses++;
    await sleep(GAP_MS + Math.random() * 20);
    const text = `Version ${1000 + i}`;
    const shown = within((f) => { waiting = f && { text, resolve: f }; });
    t0 = now();
    fs.writeFileSync(path.join(root, 'www/index.html'), largePage({ edited: text, distill }));
    if (await shown) {
      const e = seen.get(text);
      edit.toApplied.push(e.at - t0);
      if (e.msg && e.msg > t0) { edit.fromMsg.push(e.at - e.msg); edit.toMsg.push(e.msg - t0); }
      const marks = await takeMarks(page).catch(() => ({}));
      for (const [k, v] of Object.entries(marks)) (stages[k] = stages[k] || []).push(v);
    } else misses++;
    await sleep(GAP_MS + Math.random() * 20);
  }
  const reloads = navigations - nav0;
  await browser.close();
  return { name, swap, edit, stages, misses, noise, reloads };
}

async function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

function liveServerBin() {
  const candidates = [process.env.LIVE_SERVER_BIN, path.join(here, 'node_modules/.bin/live-server')];
  return candidates.find((c) => c && fs.existsSync(c));
}

async function startLiveServer(root) {
  const bin = liveServerBin();
  const port = await freePort();
  const proc = spawn(bin, [`--port=${port}`, '--host=127.0.0.1', '--no-browser', '--quiet', path.join(root, 'www')],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout.resume();
  proc.stderr.resume();
  const url = `http://127.0.0.1:${port}/`;
  for (let t = 0; t < 100; t++) {
    try { if ((await fetch(url)).ok) break; } catch { /* not yet */ }
    await sleep(100);
  }
  return { url, stop: () => new Promise((r) => { proc.on('exit', r); proc.kill('SIGTERM'); }) };
}

// ---- run -------------------------------------------------------------------------------------
const results = [];
if (!ONLY) {
  const root = fixture();
  const bin = process.env.FOLIO_BIN || path.join(repo, 'build/src/folio');
  const folio = await startFolio({ root, bin });
  try {
    results.push(await measureStream({ name: 'folio', url: folio.url, root }));
    results.push(await measure({ name: 'folio', url: folio.url, root, nodeListener: false }));
  } finally {
    await folio.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}
if (!ONLY) {
  const root = textFixture();
  const bin = process.env.FOLIO_BIN || path.join(repo, 'build/src/folio');
  const folio = await startFolio({ root, bin });
  try {
    results.push(await measureText({ name: 'folio', url: folio.url, root }));
  } finally {
    await folio.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}
const larges = [];
for (const distill of [false, true]) {
  if (ONLY && ONLY !== (distill ? 'distill' : 'large')) continue;
  const root = fixture(largePage({ edited: 'Version 0', distill }), largeCss);
  if (distill) fs.writeFileSync(path.join(root, 'www/template.js'), distillTemplate());
  const bin = process.env.FOLIO_BIN || path.join(repo, 'build/src/folio');
  const folio = await startFolio({ root, bin });
  try {
    larges.push(Object.assign(await measureLarge({ name: 'folio', url: folio.url, root, distill }), { distill }));
  } finally {
    await folio.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}
if (!ONLY && WITH_LIVE_SERVER && liveServerBin()) {
  const root = fixture();
  const ls = await startLiveServer(root);
  try {
    results.push(await measure({ name: 'live-server 1.2.2', url: ls.url, root, nodeListener: false }));
  } finally {
    await ls.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
  const troot = textFixture();
  const tls = await startLiveServer(troot);
  try {
    results.push(await measureText({ name: 'live-server 1.2.2', url: tls.url, root: troot }));
  } finally {
    await tls.stop();
    fs.rmSync(troot, { recursive: true, force: true });
  }
} else if (!ONLY && WITH_LIVE_SERVER) {
  console.log('(live-server not installed: `npm install --prefix bench` to compare)\n');
}

const fmt = (x) => (x === undefined ? '-' : x.toFixed(1));
if (results.length) {
  console.log(`Stylesheet and page-text saves: ${SAVES} of each per server, ${GAP_MS} ms apart; times in ms from the write.\n`);
  console.log('| server | stage | n | median | p90 | p99 | max |');
  console.log('|---|---|---|---|---|---|---|');
}
for (const r of results) {
  const rows = [
    ['event reaches a node client (SSE)', r.toMsgNode],
    ['event reaches the page', r.toMsgPage],
    ['new style applied in the page', r.toApplied],
    ['page text edit shown in the page', r.toText || []],
  ];
  for (const [stage, xs] of rows) {
    if (!xs.length) continue;
    const s = stats(xs);
    console.log(`| ${r.name} | ${stage} | ${s.n} | ${fmt(s.median)} | ${fmt(s.p90)} | ${fmt(s.p99)} | ${fmt(s.max)} |`);
  }
  if (r.toText) console.log(`| ${r.name} | page reloads during the text edits | ${r.reloads} | | | | |`);
  if (r.reconnects) console.log(`| ${r.name} | the page's stream reconnected | ${r.reconnects} | | | | |`);
  if (r.misses) console.log(`| ${r.name} | saves never applied within 5 s | ${r.misses} | | | | |`);
  if (r.noise.length) console.log(`(${r.name}: page errors: ${r.noise.slice(0, 3).join('; ')})`);
}

for (const large of larges) {
  const size = Buffer.byteLength(largePage({ edited: 'Version 1000', distill: large.distill }));
  console.log(`\n${large.distill ? 'Distill page, its template rewriting the DOM' : 'Large page, distill-shaped markup'} ` +
    `(${(size / 1024).toFixed(0)} KiB${large.distill ? ` and ${(distillTemplate().length / 1024).toFixed(0)} KiB of template.js` : ''}), folio: ${SAVES} stylesheet swaps and ` +
    `${SAVES} page-text edits, alternating in one page scrolled to its middle; ms.\n`);
  console.log('| change | measured | n | median | p90 | p99 | max |');
  console.log('|---|---|---|---|---|---|---|');
  const row = (what, how, xs) => {
    if (!xs.length) return;
    const s = stats(xs);
    console.log(`| ${what} | ${how} | ${s.n} | ${fmt(s.median)} | ${fmt(s.p90)} | ${fmt(s.p99)} | ${fmt(s.max)} |`);
  };
  row('stylesheet swap', 'write to new style applied', large.swap.toApplied);
  row('page-text edit', 'write to text shown', large.edit.toApplied);
  row('stylesheet swap', 'write to event in the page', large.swap.toMsg);
  row('page-text edit', 'write to event in the page', large.edit.toMsg);
  row('stylesheet swap', 'event in the page to applied', large.swap.fromMsg);
  row('page-text edit', 'event in the page to shown', large.edit.fromMsg);
  for (const k of STAGES.slice(1)) row('page-text edit', `stage: to ${k}`, large.stages[k] || []);
  for (const k of ['fetch: first byte', 'fetch: body']) row('page-text edit', k, large.stages[k] || []);
  const ratio = (a, b, q) => (stats(a)[q] / stats(b)[q]).toFixed(2);
  if (large.edit.toApplied.length && large.swap.toApplied.length) {
    console.log(`\nedit / swap, from the write: median ${ratio(large.edit.toApplied, large.swap.toApplied, 'median')}, ` +
      `p99 ${ratio(large.edit.toApplied, large.swap.toApplied, 'p99')}`);
  }
  if (large.edit.fromMsg.length && large.swap.fromMsg.length) {
    console.log(`edit / swap, from the event's arrival: median ${ratio(large.edit.fromMsg, large.swap.fromMsg, 'median')}, ` +
      `p99 ${ratio(large.edit.fromMsg, large.swap.fromMsg, 'p99')}`);
  }
  console.log(`page reloads during the edits: ${large.reloads}${large.misses ? `; saves never shown within 5 s: ${large.misses}` : ''}`);
  if (large.noise.length) console.log(`(page errors: ${large.noise.slice(0, 3).join('; ')})`);
}
