// Live reload in a real browser: headless Debian Chromium through playwright-core.
//
// A small fixture article (a page, a stylesheet, a fragment loader like the real article's,
// two fragments, an asset) is copied into a temp folder and served by folio. One page stays
// open while the test edits files the ways authors and editors do, and checks what the page
// does: stylesheets swap in place, fragments are re-injected (their scripts re-run), anything
// else reloads, editor scratch files do nothing, a restarted server makes the page reload
// once. Each step is bounded (STEP_MS). Ends with "N passed, M failed"; exits 1 on failure.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFolio } from '../lib/folio.mjs';
import { launchBrowser } from '../lib/browser.mjs';
import { listen } from '../lib/live.mjs';
import { runSteps } from '../lib/steps.mjs';

const STEP_MS = 5000;   // every wait for the page to react is bounded by this
const QUIET_MS = 800;   // how long "nothing happens" is watched for (debounce is 30 ms)

// ---- fixture ---------------------------------------------------------------------------------

const LOADER = `/* like the real article's loader: relative fetch, inject, re-run scripts */
(function () {
  'use strict';
  function runScripts(el) {
    el.querySelectorAll('script').forEach(function (old) {
      var s = document.createElement('script');
      for (var i = 0; i < old.attributes.length; i++) s.setAttribute(old.attributes[i].name, old.attributes[i].value);
      s.textContent = old.textContent;
      old.parentNode.replaceChild(s, old);
    });
  }
  function load(el) {
    var name = el.id.slice('fragment-'.length);
    return fetch('fragments/' + encodeURIComponent(name) + '.html', { cache: 'no-cache' })
      .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.text(); })
      .then(function (html) {
        el.innerHTML = html;
        runScripts(el);
        el.setAttribute('data-fragment-state', 'loaded');
        document.dispatchEvent(new CustomEvent('folio:fragment', { detail: { name: name, state: 'loaded' } }));
      });
  }
  function containers() { return Array.prototype.slice.call(document.querySelectorAll('[id^="fragment-"]')); }
  var api = {
    loadAll: function () { return Promise.all(containers().map(load)); },
    reload: function (name) { window.apiReloads = (window.apiReloads || 0) + 1; var el = document.getElementById('fragment-' + name); return el ? load(el) : Promise.resolve(); },
  };
  if (!document.documentElement.hasAttribute('data-no-api')) window.folioFragments = api;
  api.loadAll();
})();
`;

// The real article's loader offers window.folioFragments.reload(name), which the client
// uses; a page with data-no-api has none, so the client re-injects by itself.
const page = (title, api = true) => `<!doctype html>
<html lang=en${api ? '' : ' data-no-api'}>
<head>
<meta charset=utf-8>
<title>${title}</title>
<link rel=icon href="../assets/pic.svg">
<link rel=stylesheet href=style.css>
<script src=loader.js defer></script>
</head>
<body>
<h1 id=title>${title}</h1>
<img id=pic src="assets/pic.svg" alt="a square" width=10 height=10>
<div id="fragment-note"><p>Loading…</p></div>
<div id="fragment-chart"><p>Loading…</p></div>
</body>
</html>
`;

const fragment = (name, version) =>
  `<p class="${name}">${name} version ${version}</p>\n` +
  `<script>window.runs = window.runs || {}; window.runs['${name}'] = (window.runs['${name}'] || 0) + 1;` +
  ` document.querySelector('#fragment-${name} .${name}').dataset.ran = '${version}';</script>\n`;

const css = (r, g, b) => `h1 { color: rgb(${r}, ${g}, ${b}); }\nbody { margin: 0; }\n`;

function makeFixture() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-lr-'));
  const w = (rel, data) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), data);
  };
  w('www/index.html', page('Fixture one'));
  w('www/bare.html', page('Bare page', false));
  w('www/style.css', css(1, 2, 3));
  w('www/loader.js', LOADER);
  w('fragments/note.html', fragment('note', 1));
  w('fragments/chart.html', fragment('chart', 1));
  w('assets/pic.svg', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>\n');
  return root;
}

// ---- helpers --------------------------------------------------------------------------------

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function assert(cond, msg) { if (!cond) throw new Error(msg); }

async function waitFor(pg, fn, arg, what) {
  try {
    await pg.waitForFunction(fn, arg, { timeout: STEP_MS, polling: 10 });
  } catch (e) {
    throw new Error(`timed out after ${STEP_MS} ms waiting for ${what}`);
  }
}

// ---- the run --------------------------------------------------------------------------------

const root = makeFixture();
const file = (rel) => path.join(root, rel);
let folio = await startFolio({ root });
const port = folio.port;
// Whatever happens below (a browser that will not launch, a throw), no server outlives us.
process.on('exit', () => { if (!folio.exited()) folio.proc.kill('SIGKILL'); });
const browser = await launchBrowser();
const context = await browser.newContext();
const pg = await context.newPage();

const noise = [];      // console messages and page errors: the client must make none
const netNoise = [];   // the browser's own network lines while the server is down (allowed)
let serverDown = false;
pg.on('console', (m) => {
  const text = m.text();
  if (serverDown && /ERR_CONNECTION_REFUSED|Failed to load resource|__folio\/events/.test(text)) netNoise.push(text);
  else noise.push(`[console.${m.type()}] ${text} (${m.location().url || 'no url'})`);
});
pg.on('pageerror', (e) => noise.push(`[pageerror] ${e.message}`));
let loads = 0;
pg.on('load', () => { loads++; });
const requests = [];
pg.on('request', (r) => requests.push(r.url()));

let ears = listen(folio.url);

async function openPage() {
  await pg.goto(folio.url, { waitUntil: 'load', timeout: STEP_MS * 2 });
  await waitFor(pg, () => document.querySelectorAll('[data-fragment-state=loaded]').length === 2, null,
    'both fragments to load');
  // The client is connected once the browser's stream said hello; wait for the server to count it.
  await waitFor(pg, () => !!window.__folioReload, null, 'the live reload client to start');
  const t0 = Date.now();
  for (;;) {
    const h = await (await fetch(folio.url + '__folio/health')).json();
    if (h.event_stream_connections >= 2) break;   // node's ears + the page
    assert(Date.now() - t0 < STEP_MS, `the page never opened its event stream (streams: ${h.event_stream_connections})`);
    await sleep(20);
  }
  await pg.evaluate(() => { window.__marker = 'still here'; });
}

async function notNavigated(before) {
  const same = await pg.evaluate(() => window.__marker === 'still here' &&
    performance.getEntriesByType('navigation').length === 1);
  assert(same, 'the page navigated (its window marker is gone)');
  assert(loads === before, `the page reloaded (${loads - before} load events)`);
}

const steps = [];
const step = (name, fn) => steps.push({ name, fn });

step('page loads with the client, once, and both fragments', async () => {
  await openPage();
  const n = await pg.evaluate(() => document.querySelectorAll('script[src$="__folio/reload.js"]').length);
  assert(n === 1, `expected exactly one reload client script in the page, found ${n}`);
  const src = await pg.evaluate(() => document.querySelector('script[src$="__folio/reload.js"]').getAttribute('src'));
  assert(src === '__folio/reload.js', `client src should be relative, got ${src}`);
  const runs = await pg.evaluate(() => window.runs);
  assert(runs.note === 1 && runs.chart === 1, `fragment scripts ran ${JSON.stringify(runs)}`);
});

step('(a) editing www/style.css changes the computed style without navigation', async () => {
  const before = loads;
  const evs = ears.events.length;
  fs.writeFileSync(file('www/style.css'), css(4, 5, 6));
  await waitFor(pg, () => getComputedStyle(document.getElementById('title')).color === 'rgb(4, 5, 6)', null,
    'h1 to turn rgb(4, 5, 6)');
  await notNavigated(before);
  await waitFor(pg, () => document.querySelectorAll('link[rel=stylesheet]').length === 1, null,
    'the old stylesheet link to be removed');
  assert(await ears.next(evs + 1), 'no event reached the node listener');
  await sleep(100);
  const got = ears.events.slice(evs);
  assert(got.length === 1 && got[0].type === 'css' && got[0].data === '/style.css',
    `expected one css /style.css event, got ${JSON.stringify(got)}`);
});

step('(b) editing a fragment re-injects it (its script re-runs) without navigation', async () => {
  const before = loads;
  const evs = ears.events.length;
  const runs0 = await pg.evaluate(() => ({ ...window.runs }));
  fs.writeFileSync(file('fragments/note.html'), fragment('note', 2));
  await waitFor(pg, () => {
    const p = document.querySelector('#fragment-note .note');
    return p && p.textContent === 'note version 2' && p.dataset.ran === '2';
  }, null, 'the note fragment to show version 2 and its script to run');
  await notNavigated(before);
  await sleep(150); // would a second injection follow? (bounded look)
  const runs = await pg.evaluate(() => ({ ...window.runs }));
  assert(runs.note === runs0.note + 1, `note's script should run once more, ran ${runs.note - runs0.note} times`);
  assert(runs.chart === runs0.chart, 'the other fragment was re-injected too');
  const viaApi = await pg.evaluate(() => window.apiReloads);
  assert(viaApi === 1, `the client should re-inject through window.folioFragments.reload, called ${viaApi} times`);
  const got = ears.events.slice(evs);
  assert(got.length === 1 && got[0].type === 'fragment' && got[0].data === 'note',
    `expected one fragment note event, got ${JSON.stringify(got)}`);
});

step('(b) without the loader API the client re-injects the fragment itself, in a second tab', async () => {
  const pg2 = await context.newPage();
  pg2.on('console', (m) => noise.push(`[tab2 console.${m.type()}] ${m.text()} (${m.location().url || 'no url'})`));
  pg2.on('pageerror', (e) => noise.push(`[tab2 pageerror] ${e.message}`));
  try {
    await pg2.goto(folio.url + 'bare.html', { waitUntil: 'load', timeout: STEP_MS * 2 });
    await waitFor(pg2, () => document.querySelectorAll('[data-fragment-state=loaded]').length === 2 &&
      !window.folioFragments && !!window.__folioReload, null, 'the bare page to load');
    // Tabs of one server share one stream (a Web Lock elects who streams):
    // the node listener and the first tab's stream, no third.
    await sleep(300);
    const h = await (await fetch(folio.url + '__folio/health')).json();
    assert(h.event_stream_connections === 2, `two tabs should share one stream, the server counts ${h.event_stream_connections - 1}`);
    await pg2.evaluate(() => { window.__marker = 'still here'; });
    const before = loads;
    fs.writeFileSync(file('fragments/chart.html'), fragment('chart', 2));
    const inject = () => {
      const p = document.querySelector('#fragment-chart .chart');
      return p && p.textContent === 'chart version 2' && p.dataset.ran === '2';
    };
    await waitFor(pg2, inject, null, 'tab 2 (no loader API) to re-inject the chart fragment');
    await waitFor(pg, inject, null, 'tab 1 (loader API) to re-inject the chart fragment');
    const m = await pg2.evaluate(() => window.__marker);
    assert(m === 'still here', 'tab 2 navigated');
    await notNavigated(before);
  } finally {
    await pg2.close();
  }
});

step('(h) eight more tabs (past HTTP/1.1\'s six connections an origin) all follow a stylesheet edit', async () => {
  const tabs = [];
  try {
    for (let i = 0; i < 8; i++) {
      const t = await context.newPage();
      t.on('pageerror', (e) => noise.push(`[tab ${i} pageerror] ${e.message}`));
      await t.goto(folio.url, { waitUntil: 'load', timeout: STEP_MS * 2 });
      tabs.push(t);
    }
    for (const t of tabs) {
      await waitFor(t, () => document.querySelectorAll('[data-fragment-state=loaded]').length === 2, null,
        'every tab to load its fragments (no connection starved)');
    }
    const before = loads;
    fs.writeFileSync(file('www/style.css'), css(11, 12, 13));
    for (const t of [pg, ...tabs]) {
      await waitFor(t, () => getComputedStyle(document.getElementById('title')).color === 'rgb(11, 12, 13)',
        null, 'every tab to show the new colour');
    }
    await notNavigated(before);
    const h = await (await fetch(folio.url + '__folio/health')).json();
    assert(h.event_stream_connections === 2, `nine tabs should share one stream, the server counts ${h.event_stream_connections - 1}`);
  } finally {
    for (const t of tabs) await t.close();
  }
});

step('(d) an atomic-rename save of the stylesheet is seen', async () => {
  const before = loads;
  const evs = ears.events.length;
  const tmp = file('www/style.css.folio-tmp-1234');
  fs.writeFileSync(tmp, css(7, 8, 9));
  fs.renameSync(tmp, file('www/style.css'));
  await waitFor(pg, () => getComputedStyle(document.getElementById('title')).color === 'rgb(7, 8, 9)', null,
    'h1 to turn rgb(7, 8, 9)');
  await notNavigated(before);
  await sleep(100);
  const got = ears.events.slice(evs);
  assert(got.length === 1 && got[0].type === 'css' && got[0].data === '/style.css',
    `expected one css event for the rename save, got ${JSON.stringify(got)}`);
});

step('(e) editor scratch files trigger nothing', async () => {
  const before = loads;
  const evs = ears.events.length;
  const req0 = requests.length;
  const scratch = ['www/.style.css.swp', 'www/style.css~', 'www/4913', 'www/.#style.css',
    'fragments/.note.html.swp', 'fragments/note.html~'];
  for (const s of scratch) fs.writeFileSync(file(s), 'scratch');
  for (const s of scratch) fs.unlinkSync(file(s));
  fs.writeFileSync(file('www/style.css~'), 'a backup that stays');
  await sleep(QUIET_MS);
  assert(ears.events.length === evs, `scratch files sent ${JSON.stringify(ears.events.slice(evs))}`);
  assert(requests.length === req0, `the page made requests: ${requests.slice(req0).join(', ')}`);
  await notNavigated(before);
  // The stream is still alive: the next real save is the next event.
  fs.writeFileSync(file('www/style.css'), css(10, 11, 12));
  await waitFor(pg, () => getComputedStyle(document.getElementById('title')).color === 'rgb(10, 11, 12)', null,
    'h1 to turn rgb(10, 11, 12) after the scratch files');
  assert(await ears.next(evs + 1), 'no event after a real save');
});

step('(g) nothing is injected into fragments; one client per page', async () => {
  const r = await pg.evaluate(async () => {
    const frag = await (await fetch('fragments/note.html', { cache: 'no-store' })).text();
    const page = await (await fetch('index.html', { cache: 'no-store' })).text();
    return {
      frag, page,
      inDom: document.querySelectorAll('script[src*="__folio/reload.js"]').length,
      early: document.querySelectorAll('script[src*="__folio/early.js"]').length,
      inFragments: document.querySelectorAll('[id^=fragment-] script[src*="__folio"]').length,
    };
  });
  assert(!r.frag.includes('__folio'), 'a fetched fragment carries the reload client');
  assert(r.frag === fs.readFileSync(file('fragments/note.html'), 'utf8'), 'the fragment bytes differ from the file');
  assert(!r.page.includes('__folio'), 'HTML fetched by script (Sec-Fetch-Dest: empty) carries the client');
  assert(r.inDom === 1 && r.early === 1 && r.inFragments === 0,
    `client scripts in DOM: ${r.inDom} (first parts: ${r.early}), in fragments: ${r.inFragments}`);
});

step('(c) editing www/index.html patches the page in place (title and heading), no reload', async () => {
  const before = loads;
  fs.writeFileSync(file('www/index.html'), page('Fixture two'));
  await waitFor(pg, () => document.title === 'Fixture two' &&
    document.getElementById('title').textContent === 'Fixture two', null, 'the new title in place');
  await notNavigated(before);
  const runs = await pg.evaluate(() => window.runs);
  assert(runs.note >= 1 && runs.chart >= 1, 'fragments lost');
});

step('(c) a script added to www/index.html reloads the page once', async () => {
  const before = loads;
  fs.writeFileSync(file('www/index.html'), page('Fixture three').replace('</head>', '<script>window.added = 1;</script>\n</head>'));
  await waitFor(pg, () => document.title === 'Fixture three' && window.__marker === undefined && window.added === 1, null,
    'the page to reload with the new script');
  await waitFor(pg, () => document.querySelectorAll('[data-fragment-state=loaded]').length === 2, null,
    'fragments after the reload');
  await waitFor(pg, () => window.__folioReload.place === null || window.__folioReload.place === 'restored', null,
    'the client to settle');
  assert(loads === before + 1, `expected one reload, saw ${loads - before}`);
  await pg.evaluate(() => { window.__marker = 'still here'; });
});

step('(f) a restarted server makes the page reload once after reconnecting', async () => {
  // Wait until the reloaded page's stream is connected before pulling the plug.
  const t0 = Date.now();
  for (;;) {
    const h = await (await fetch(folio.url + '__folio/health')).json();
    if (h.event_stream_connections >= 2) break;
    assert(Date.now() - t0 < STEP_MS, 'the reloaded page never reconnected its stream');
    await sleep(20);
  }
  const before = loads;
  serverDown = true;
  ears.close();
  const t1 = Date.now();
  const exit = await folio.stop();
  assert(exit.code === 0, `folio exited ${JSON.stringify(exit)} on SIGTERM`);
  assert(Date.now() - t1 < 3000, `folio took ${Date.now() - t1} ms to stop with open streams`);
  await sleep(300); // the page sees the stream end and starts retrying against nobody
  assert(loads === before, 'the page reloaded while no server was there');
  folio = await startFolio({ root, args: ['--port', String(port)] });
  assert(folio.port === port, `restarted on ${folio.port}, not ${port}`);
  await waitFor(pg, () => window.__marker === undefined, null, 'the page to reload after the restart');
  serverDown = false;
  await waitFor(pg, () => document.querySelectorAll('[data-fragment-state=loaded]').length === 2, null,
    'fragments after the restart reload');
  await pg.evaluate(() => { window.__marker = 'still here'; });
  ears = listen(folio.url);
  await sleep(1500); // longer than the client's retry: a second reload would show by now
  assert(loads === before + 1, `expected exactly one reload after the restart, saw ${loads - before}`);
  // And live reload works against the new server.
  fs.writeFileSync(file('www/style.css'), css(13, 14, 15));
  await waitFor(pg, () => getComputedStyle(document.getElementById('title')).color === 'rgb(13, 14, 15)', null,
    'a css edit to apply after the restart');
  await notNavigated(before + 1);
});

step('no console errors or noise from the page', async () => {
  assert(noise.length === 0, `console noise:\n  ${noise.join('\n  ')}`);
});

await runSteps(steps, {
  folio,
  finish: async () => {
    if (netNoise.length) console.log(`(browser network lines while the server was down, allowed: ${netNoise.length})`);
    ears.close();
    await browser.close().catch(() => {});
    try { await folio.stop(); } finally { fs.rmSync(root, { recursive: true, force: true }); }
  },
});
