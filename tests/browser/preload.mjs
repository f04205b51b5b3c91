// The fragments' preload hints in headless Chromium (Debian's): the page's own fetches are
// served from the preloads (serve/preload.h).
//
// The repo's article (www/, fragments/, assets/: its loader fetches every fragment with
// `cache: 'no-cache'`) is served by folio in production and in preview, then with
// --no-preload-fragments. For each: every fragment element is filled; Chromium's Network domain
// saw each fragment requested exactly once by the page (a second request is a preload not
// matched; preview's client reads the sources once more for its audit, counted apart); each
// fragment's one resource-timing entry was made by the Link header (initiatorType "link"), none
// by the page's fetch(); and no console message about a preload came within 3.5 s of the load
// event: Chromium says "preloaded but not used" on a timer of 3 s from that event, so its
// absence can only be seen after it. Without the hints, every fragment's entry is the
// fetch's: the checks tell the two apart. Last, a small article whose fragments are named
// beyond ASCII (é, ö, ß, a CJK character): the same checks. Ends with "N passed, M failed";
// exits 1 on failure.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFolio } from '../lib/folio.mjs';
import { launchBrowser } from '../lib/browser.mjs';
import { makeChecks } from '../lib/checks.mjs';

const SOURCE_ROOT = process.env.FOLIO_SOURCE_ROOT ||
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const LOAD_MS = 20000;
const UNUSED_PRELOAD_MS = 3500; // Chromium's warning comes 3 s after the load event
const TOTAL_MS = 150000;

const checks = makeChecks();
const check = checks.check;
let folio = null;
let browser = null;
async function cleanup() {
  if (browser) await browser.close().catch(() => {});
  if (folio) await folio.stop().catch(() => {});
}
const watchdog = setTimeout(async () => {
  console.log(`FAIL the whole run within ${TOTAL_MS / 1000} s`);
  await cleanup();
  process.exit(1);
}, TOTAL_MS);
watchdog.unref();

// An article whose fragments are named beyond ASCII, fetched by a loader that writes half of
// the names as they are (the URL parser encodes them) and half through encodeURIComponent:
// both spellings must meet the hints' %XX ones. Its own temporary root, removed at the end.
const NAMES = ['intro', 'caf\u00e9', 'gr\u00f6\u00dfe', '\u8868'];
function unicodeRoot() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-preload-names-'));
  for (const dir of ['www', 'fragments', 'assets']) fs.mkdirSync(path.join(root, dir));
  const loader = `for (const [i, el] of [...document.querySelectorAll('[id^="fragment-"]')].entries()) {
  const name = el.id.slice(9);
  fetch('fragments/' + (i % 2 ? encodeURIComponent(name) : name) + '.html')
    .then((r) => (r.ok ? r.text() : Promise.reject(r.status)))
    .then((t) => { el.innerHTML = t; el.setAttribute('data-fragment-state', 'loaded'); },
      () => el.setAttribute('data-fragment-state', 'error'));
}`;
  fs.writeFileSync(path.join(root, 'www/index.html'), '<!doctype html><html lang=en><head><meta charset=utf-8>' +
    '<title>names</title></head><body>\n' + NAMES.map((n) => `<div id="fragment-${n}"></div>\n`).join('') +
    `<script>${loader}</script>\n</body></html>\n`);
  for (const n of NAMES) fs.writeFileSync(path.join(root, 'fragments', `${n}.html`), `<p>${n}</p>\n`);
  return root;
}

// One load of the article from a fresh profile: what each fragment's requests were.
async function load(label, hinted) {
  const context = await browser.newContext();
  const pg = await context.newPage();
  const cdp = await context.newCDPSession(pg);
  const requests = new Map(); // fragment URL -> requests Chromium made for it
  const audits = new Map();   // ... and those preview's client made
  const priorities = new Map(); // fragment URL -> the priority Chromium first asked for it at
  cdp.on('Network.requestWillBeSent', (p) => {
    if (!p.request.url.includes('/fragments/')) return;
    // Preview's client reads each fragment's source once more for its audit of the page
    // (reload.js sources()), whatever the hints: not the page's load.
    if (JSON.stringify(p.initiator.stack || {}).includes('/__folio/reload.js')) {
      audits.set(p.request.url, (audits.get(p.request.url) || 0) + 1);
      return;
    }
    requests.set(p.request.url, (requests.get(p.request.url) || 0) + 1);
    if (!priorities.has(p.request.url)) priorities.set(p.request.url, p.request.initialPriority);
  });
  await cdp.send('Network.enable');
  const warnings = [];
  pg.on('console', (m) => { if (/preload/i.test(m.text())) warnings.push(m.text()); });
  const resp = await pg.goto(folio.url, { waitUntil: 'load', timeout: LOAD_MS });
  const hints = (await resp.headerValue('link')) || '';
  check(hinted ? hints.includes('rel=preload; as=fetch; crossorigin=anonymous; fetchpriority=low') : hints === '',
    `${label}: the page ${hinted ? 'has' : 'has no'} preload hints`, hints);
  let settled = true;
  await pg.waitForFunction(() => {
    const els = [...document.querySelectorAll('[id^="fragment-"]')];
    return els.length > 0 && els.every((e) => ['loaded', 'error'].includes(e.getAttribute('data-fragment-state')));
  }, null, { timeout: LOAD_MS, polling: 50 }).catch(() => { settled = false; });
  const names = await pg.$$eval('[id^="fragment-"]', (els) =>
    els.filter((e) => e.getAttribute('data-fragment-state') === 'loaded').map((e) => e.id.slice(9)));
  check(settled && names.length >= 4, `${label}: every fragment element is filled`, names.join(' '));
  await pg.waitForTimeout(UNUSED_PRELOAD_MS);
  const timing = await pg.evaluate(() => performance.getEntriesByType('resource')
    .filter((e) => e.name.includes('/fragments/')).map((e) => [e.name, e.initiatorType]));
  const urls = names.map((n) => new URL(`fragments/${n}.html`, folio.url).href);
  const twice = urls.filter((u) => requests.get(u) !== 1);
  const audited = [...audits.values()].reduce((a, b) => a + b, 0);
  check(twice.length === 0, `${label}: each fragment requested once` + (audited ? ` (and ${audited} by preview's audit)` : ''),
    twice.map((u) => `${u}: ${requests.get(u) || 0}`).join(', '));
  // The audit's reads are fetches of their own, after the page's.
  const by = (u) => timing.filter(([name]) => name === u).map(([, type]) => type)
    .slice(0, timing.filter(([name]) => name === u).length - (audits.get(u) || 0)).join(',');
  const want = hinted ? 'link' : 'fetch';
  const other = urls.filter((u) => by(u) !== want);
  check(other.length === 0, `${label}: each fragment's one fetch is ${hinted ? 'the preload\'s' : 'the page\'s own'}`,
    other.map((u) => `${u}: ${by(u)}`).join(', '));
  check(warnings.length === 0, `${label}: no console message about a preload`, warnings.join('\n     '));
  // fetchpriority=low: the preloads wait behind what the page renders with (the page's own
  // fetch() asks at High).
  const notLow = urls.filter((u) => (priorities.get(u) === 'Low') !== hinted);
  check(notLow.length === 0, `${label}: each fragment ${hinted ? 'preloaded at Low priority' : 'fetched above Low'}`,
    notLow.map((u) => `${u}: ${priorities.get(u)}`).join(', '));
  await context.close();
}

try {
  browser = await launchBrowser();
  for (const [label, args, hinted] of [['production', ['--production'], true], ['preview', [], true],
    ['production, --no-preload-fragments', ['--production', '--no-preload-fragments'], false]]) {
    folio = await startFolio({ root: SOURCE_ROOT, args });
    await load(label, hinted);
    await folio.stop();
    folio = null;
  }
  const root = unicodeRoot();
  try {
    folio = await startFolio({ root, args: ['--production'] });
    await load('fragments named beyond ASCII', true);
    await folio.stop();
    folio = null;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
} catch (e) {
  check(false, 'the run completes', e.stack || String(e));
} finally {
  await cleanup();
}
process.exit(checks.finish());
