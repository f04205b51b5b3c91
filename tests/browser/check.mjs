// folio check, live: the panel of broken references in a real browser (Debian's Chromium
// through playwright-core). A small article is served in preview; the test saves a page with
// a broken image and sees the panel appear in the patched page with the file:line, dismisses
// it, breaks the stylesheet (the panel comes back, in place), fixes both (the panel goes), then
// deletes a fragment (its failed load is listed) and restores it (the panel goes). Then the
// distill-style fixture (tests/fixtures/check/distill: ids the page's script makes, a fragment
// whose script adds links and images): once settled the panel lists exactly the real problems,
// with file:line or "made by a script", and after a save the server's one more (an anchor into
// another page), never a script-made id. Each wait is bounded (STEP_MS). Ends with
// "N passed, M failed"; exits 1 on failure.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFolio } from '../lib/folio.mjs';
import { launchBrowser } from '../lib/browser.mjs';
import { runSteps } from '../lib/steps.mjs';

const STEP_MS = 5000;

// Like the real article's loader: relative fetch, inject, and a folio:fragment event after each.
const LOADER = `(function () {
  function load(el) {
    var name = el.id.slice('fragment-'.length);
    return fetch('fragments/' + encodeURIComponent(name) + '.html', { cache: 'no-cache' })
      .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.text(); })
      .then(function (html) { el.innerHTML = html; return 'loaded'; }, function () { return 'error'; })
      .then(function (state) {
        el.setAttribute('data-fragment-state', state);
        document.dispatchEvent(new CustomEvent('folio:fragment', { detail: { name: name, state: state } }));
      });
  }
  window.folioFragments = {
    reload: function (name) { var el = document.getElementById('fragment-' + name); return el ? load(el) : Promise.resolve(); },
  };
  document.querySelectorAll('[id^="fragment-"]').forEach(load);
})();
`;

const PAGE = `<!doctype html>
<html lang=en>
<head>
<meta charset=utf-8>
<title>Check</title>
<link rel=stylesheet href=style.css>
<script src=loader.js defer></script>
</head>
<body>
<h1 id=title>Check</h1>
<img src="assets/pic.svg" alt="a square" width=10 height=10>
<div id="fragment-note"><p>Loading…</p></div>
</body>
</html>
`;
const BROKEN_PAGE = PAGE.replace('<img src="assets/pic.svg"', '<img src="assets/pic-typo.svg"');
const BROKEN_LINE = BROKEN_PAGE.split('\n').findIndex((l) => l.includes('pic-typo')) + 1;
const CSS = 'h1 { color: rgb(1, 2, 3); background: url(../assets/pic.svg); }\n';
const BROKEN_CSS = 'h1 { color: rgb(4, 5, 6); background: url(../assets/gone.svg); }\n';

function makeFixture() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-check-'));
  const w = (rel, data) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), data);
  };
  w('www/index.html', PAGE);
  w('www/style.css', CSS);
  w('www/loader.js', LOADER);
  w('fragments/note.html', '<p class=note>a note</p>\n');
  w('assets/pic.svg', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>\n');
  return root;
}

function assert(cond, msg) { if (!cond) throw new Error(msg); }

async function waitFor(pg, fn, arg, what) {
  try {
    await pg.waitForFunction(fn, arg, { timeout: STEP_MS, polling: 10 });
  } catch (e) {
    const panel = await pg.evaluate(() => { const p = document.getElementById('folio-check'); return p ? p.textContent : '(no panel)'; }).catch(() => '?');
    throw new Error(`timed out after ${STEP_MS} ms waiting for ${what}; panel: ${panel}`);
  }
}

const panelText = () => { const p = document.getElementById('folio-check'); return p ? p.textContent : null; };

const root = makeFixture();
const file = (rel) => path.join(root, rel);
const folio = await startFolio({ root });
process.on('exit', () => {
  if (!folio.exited()) folio.proc.kill('SIGKILL');
  if (folio2 && !folio2.exited()) folio2.proc.kill('SIGKILL');
});
const browser = await launchBrowser();
const pg = await (await browser.newContext()).newPage();
const noise = [];
pg.on('pageerror', (e) => noise.push(`[pageerror] ${e.message}`));
let loads = 0;
pg.on('load', () => { loads++; });

async function streaming() {
  const t0 = Date.now();
  for (;;) {
    const h = await (await fetch(folio.url + '__folio/health')).json();
    if (h.event_stream_connections >= 1) return;
    assert(Date.now() - t0 < STEP_MS, 'the page never opened its event stream');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const steps = [];
const step = (name, fn) => steps.push({ name, fn });

step('a clean page shows no panel', async () => {
  await pg.goto(folio.url, { waitUntil: 'load', timeout: STEP_MS * 2 });
  await waitFor(pg, () => document.querySelector('[data-fragment-state=loaded]') !== null && window.__folioCheck, null,
    'the fragment and the client');
  await streaming();
  assert(await pg.evaluate(panelText) === null, 'a panel on a clean page');
});

// A page edit that adds no script is patched into the live page (reload.js),
// not reloaded: wait for the patch count to grow.
const patches = () => pg.evaluate(() => window.__folioReload ? window.__folioReload.patched : -1);
async function patched(before) {
  const t0 = Date.now();
  while ((await patches()) <= before) {
    assert(Date.now() - t0 < STEP_MS, 'the page edit was not patched in');
    await new Promise((r) => setTimeout(r, 10));
  }
}

step('saving a page with a broken image: the patched page shows it with file:line', async () => {
  const before = loads, edits = await patches();
  fs.writeFileSync(file('www/index.html'), BROKEN_PAGE);
  await patched(edits);
  await waitFor(pg, (line) => { const p = document.getElementById('folio-check');
    return p && p.textContent.includes('www/index.html:' + line) && p.textContent.includes('pic-typo.svg'); },
  BROKEN_LINE, 'the panel to list the broken image');
  assert(loads === before, `the page should not have reloaded, loads: ${loads - before}`);
  const text = await pg.evaluate(panelText);
  assert(/1 broken reference\b/.test(text), `panel: ${text}`);
  if (process.env.FOLIO_ARTIFACTS) {
    fs.mkdirSync(process.env.FOLIO_ARTIFACTS, { recursive: true });
    await pg.screenshot({ path: path.join(process.env.FOLIO_ARTIFACTS, 'check-panel.png') });
  }
  await streaming();
});

step('dismissed, the panel goes', async () => {
  await pg.click('#folio-check button[aria-label=Dismiss]');
  await waitFor(pg, () => !document.getElementById('folio-check'), null, 'the panel to go');
});

step('a broken stylesheet brings it back, in place, listing both', async () => {
  const before = loads;
  fs.writeFileSync(file('www/style.css'), BROKEN_CSS);
  await waitFor(pg, () => { const p = document.getElementById('folio-check');
    return p && p.textContent.includes('www/style.css:1') && p.textContent.includes('gone.svg') &&
      p.textContent.includes('pic-typo.svg'); }, null, 'the panel to list the stylesheet too');
  await waitFor(pg, () => getComputedStyle(document.getElementById('title')).color === 'rgb(4, 5, 6)', null,
    'the new stylesheet');
  assert(loads === before, 'a stylesheet edit reloaded the page');
});

step('fixing both clears the panel', async () => {
  fs.writeFileSync(file('www/style.css'), CSS);
  await waitFor(pg, () => { const p = document.getElementById('folio-check');
    return p && !p.textContent.includes('gone.svg') && p.textContent.includes('pic-typo.svg'); }, null,
  'the stylesheet to leave the panel');
  const before = loads, edits = await patches();
  fs.writeFileSync(file('www/index.html'), PAGE);
  await patched(edits);
  await waitFor(pg, () => !document.getElementById('folio-check'), null, 'the panel to go after the fix');
  assert(loads === before, 'fixing the page reloaded it');
  // A reload now starts a new client from what sessionStorage holds: still nothing.
  await pg.reload({ waitUntil: 'load' });
  await waitFor(pg, () => typeof window.__folioCheck === 'function', null, 'the client in the reloaded page');
  await streaming();
  assert(await pg.evaluate(panelText) === null, 'the panel came back after a reload');
});

step('a fragment that fails to load after an edit is listed, and goes once it loads', async () => {
  await waitFor(pg, () => document.querySelector('[data-fragment-state=loaded]') !== null, null, 'the fragment');
  const saved = fs.readFileSync(file('fragments/note.html'));
  fs.unlinkSync(file('fragments/note.html'));
  await waitFor(pg, () => { const p = document.getElementById('folio-check');
    return p && p.textContent.includes('fragment "note" failed to load'); }, null, 'the failed load in the panel');
  fs.writeFileSync(file('fragments/note.html'), saved);
  await waitFor(pg, () => !document.getElementById('folio-check'), null, 'the panel to go once it loads');
});

step('a save that breaks hundreds: the panel counts every one, the stream stays', async () => {
  const many = PAGE.replace('</body>', Array.from({ length: 120 }, (_, i) =>
    `<img src="assets/gone-${i}.svg" alt="">`).join('\n') + '\n</body>');
  const edits = await patches();
  fs.writeFileSync(file('www/index.html'), many);
  await patched(edits);
  await waitFor(pg, () => { const p = document.getElementById('folio-check');
    return p && /folio check: 120 broken references/.test(p.textContent); }, null, 'all 120 counted');
  fs.writeFileSync(file('www/index.html'), PAGE);
  await waitFor(pg, () => !document.getElementById('folio-check'), null, 'the panel to go after the fix');
});

// ---- the distill-style article -------------------------------------------------------------
const distillSrc = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures', 'check', 'distill');
const distill = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-check-distill-'));
fs.cpSync(distillSrc, distill, { recursive: true });
const lineOf = (rel, needle) => fs.readFileSync(path.join(distill, rel), 'utf8').split('\n')
  .findIndex((l) => l.includes(needle)) + 1;
// What the rendered page really lacks, as the panel lists it: file:line, or "made by a script".
const REAL = [
  `www/index.html:${lineOf('www/index.html', '#no_such_section')} a href "#no_such_section" points at no element with id "no_such_section"`,
  `www/index.html:${lineOf('www/index.html', 'missing.png')} img src "assets/missing.png" not found`,
  'made by a script a href "#gone_by_script" points at no element with id "gone_by_script"',
  'made by a script img src "assets/made-missing.svg" not found',
];
const CROSS = `www/index.html:${lineOf('www/index.html', 'notes.html#gone')} a href "notes.html#gone" points at no element with id "gone"`;
let folio2 = null;
const listed = () => pg.evaluate(() => Array.from(document.querySelectorAll('#folio-check li'), (li) => li.textContent));

function sameList(got, want) {
  const norm = (l) => l.map((x) => x.replace(/ \(HTTP \d+\)$/, '')).sort();
  return JSON.stringify(norm(got)) === JSON.stringify(norm(want));
}

step('distill-style: from the first load, the panel lists the server\'s findings and the rendered page\'s', async () => {
  folio2 = await startFolio({ root: distill });
  await pg.goto(folio2.url, { waitUntil: 'load', timeout: STEP_MS * 2 });
  await waitFor(pg, () => document.querySelector('[data-fragment-state=loaded]') !== null &&
    document.getElementById('mixed_precision_training') !== null && (window.__folioReload.audits || 0) > 0,
  null, 'the fragment, the template\'s ids and an audit');
  const want = REAL.concat([CROSS]); /* the server's check at start knew of the anchor in notes.html */
  await waitFor(pg, (n) => document.querySelectorAll('#folio-check li').length === n, want.length, 'the server\'s list');
  const got = await listed();
  assert(sameList(got, want), `panel: ${JSON.stringify(got)}`);
  assert(!got.some((l) => /introduction|mixed_precision|a1/.test(l)), 'a script-made id listed');
  const title = await pg.evaluate(() => document.querySelector('#folio-check strong').textContent);
  assert(title === `folio check: ${want.length} broken references`, title);
  if (process.env.FOLIO_ARTIFACTS) {
    await pg.screenshot({ path: path.join(process.env.FOLIO_ARTIFACTS, 'check-panel-distill.png') });
  }
});

step('distill-style: a save that changes no finding keeps the list, and no script-made id', async () => {
  const edits = await patches();
  const page = fs.readFileSync(path.join(distill, 'www/index.html'), 'utf8');
  fs.writeFileSync(path.join(distill, 'www/index.html'), page.replace('<title>A distill', '<title>The distill'));
  await waitFor(pg, () => document.title.startsWith('The distill'), null, 'the edit in the page');
  const want = REAL.concat([CROSS]);
  await waitFor(pg, (n) => document.querySelectorAll('#folio-check li').length === n, want.length, 'the server\'s list');
  const got = await listed();
  assert(sameList(got, want), `panel: ${JSON.stringify(got)}`);
  assert(edits >= 0, 'no reload client');
});

step('distill-style: fixing the real anchor takes it off the panel', async () => {
  const page = fs.readFileSync(path.join(distill, 'www/index.html'), 'utf8');
  fs.writeFileSync(path.join(distill, 'www/index.html'), page.replace('href="#no_such_section"', 'href="#introduction"'));
  const want = REAL.slice(1).concat([CROSS]);
  await waitFor(pg, (n) => document.querySelectorAll('#folio-check li').length === n &&
    !document.getElementById('folio-check').textContent.includes('no_such_section'), want.length, 'the fixed anchor to go');
  const got = await listed();
  assert(sameList(got, want), `panel: ${JSON.stringify(got)}`);
});

step('no page errors', async () => {
  assert(noise.length === 0, noise.join('\n'));
});

await runSteps(steps, {
  folio,
  finish: async () => {
    await browser.close().catch(() => {});
    try {
      if (folio2) await folio2.stop();
      await folio.stop();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
      fs.rmSync(distill, { recursive: true, force: true });
    }
  },
});
