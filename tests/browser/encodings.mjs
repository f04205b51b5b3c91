// The repo's article and a large-fragment fixture in headless Chromium (Debian's), over br and
// over zstd (issue 18).
//
// The article (www/, fragments/, assets/) is copied to a temp folder, a 2.3 MB plotting fragment
// added beside its fragments, and served by folio in production. Chromium loads the page twice:
// once as it is (it sends "gzip, deflate, br, zstd": br must come back, the smallest), once
// asking for zstd alone (Accept-Encoding set on every request). Each time: the Content-Encoding
// of the page, its stylesheets, scripts and fragments is the one asked for, no request fails,
// no console error, every fragment element is filled; and the large fragment, opened as a
// document, decodes whole (its last element is there, and every point). Every wait is bounded.
// Ends with "N passed, M failed"; exits 1 on failure. folio and Chromium are always stopped.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startFolio } from '../lib/folio.mjs';
import { launchBrowser } from '../lib/browser.mjs';
import { makeChecks } from '../lib/checks.mjs';

const SOURCE_ROOT = process.env.FOLIO_SOURCE_ROOT ||
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const LOAD_MS = 20000;
const TOTAL_MS = 150000;
const POINTS = 30000; // circles in the large fragment: about 2.3 MB of HTML

// A build without brotli or zstd (meson options) has nothing to show here.
const libs = spawnSync('ldd', [process.env.FOLIO_BIN || ''], { encoding: 'utf8' }).stdout || '';
if (!libs.includes('libbrotlienc') || !libs.includes('libzstd')) {
  console.log('folio is built without brotli or zstd: 0 passed, 0 failed');
  process.exit(77);
}

const checks = makeChecks();
const check = checks.check;

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-enc-'));
for (const dir of ['www', 'fragments', 'assets']) {
  fs.cpSync(path.join(SOURCE_ROOT, dir), path.join(root, dir), { recursive: true });
}
// Like tests/integration/folio.py's plotting_fragment: repeats far apart, beyond gzip's window.
const circles = [];
for (let i = 0; i < POINTS; i++) {
  circles.push(`<circle cx="${i % 1000}.${String(i % 97).padStart(2, '0')}" cy="${(i * 7919) % 400}.${i % 10}" r="1.5" data-step="${i}"></circle>`);
}
const big = '<!doctype html><html lang=en><meta charset=utf-8><title>plot</title>\n' +
  `<div class="plot"><svg viewBox="0 0 1000 400" role="img" aria-label="loss">${circles.join('')}</svg></div>\n` +
  '<p id="the-end">end</p>\n';
fs.writeFileSync(path.join(root, 'fragments', 'big-plot.html'), big);

let folio = null;
let browser = null;
async function cleanup() {
  if (browser) await browser.close().catch(() => {});
  if (folio) await folio.stop().catch(() => {});
  fs.rmSync(root, { recursive: true, force: true });
}
const watchdog = setTimeout(async () => {
  console.log(`FAIL the whole run within ${TOTAL_MS / 1000} s`);
  await cleanup();
  process.exit(1);
}, TOTAL_MS);
watchdog.unref();

// Loads the article with accept (null: Chromium's own header) and checks what came back.
async function article(context, coding, accept) {
  const pg = await context.newPage();
  if (accept) await pg.setExtraHTTPHeaders({ 'Accept-Encoding': accept });
  const errors = [];
  const codings = new Map(); // url -> Content-Encoding, of the text Chromium was sent
  pg.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  pg.on('pageerror', (e) => errors.push(`[pageerror] ${e.message}`));
  pg.on('requestfailed', (r) => errors.push(`failed ${r.url()} ${r.failure()?.errorText || ''}`));
  pg.on('response', async (r) => {
    if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
    const type = r.headers()['content-type'] || '';
    if (r.status() === 200 && /text\/html|text\/css|javascript/.test(type)) {
      codings.set(r.url(), { coding: r.headers()['content-encoding'] || 'identity',
        length: Number(r.headers()['content-length'] || 0) });
    }
  });
  await pg.goto(folio.url, { waitUntil: 'load', timeout: LOAD_MS });
  let settled = true;
  await pg.waitForFunction(() => {
    const els = [...document.querySelectorAll('[id^="fragment-"]')];
    return els.length > 0 && els.every((e) => ['loaded', 'error'].includes(e.getAttribute('data-fragment-state')));
  }, null, { timeout: LOAD_MS, polling: 50 }).catch(() => { settled = false; });
  check(settled, `${coding}: every fragment element settles`);
  const frags = await pg.$$eval('[id^="fragment-"]', (els) => els.map((e) => ({
    id: e.id, state: e.getAttribute('data-fragment-state'), children: e.children.length })));
  const empty = frags.filter((f) => f.state !== 'loaded' || f.children === 0);
  check(frags.length >= 4 && empty.length === 0, `${coding}: every fragment element is filled`,
    JSON.stringify(empty));
  // Text below 512 bytes is never worth a coding; everything else must be in the one asked for.
  const wrong = [...codings].filter(([, v]) => v.length >= 512 && v.coding !== coding);
  check(codings.get(folio.url)?.coding === coding, `${coding}: the page came in ${coding}`,
    JSON.stringify(codings.get(folio.url)));
  check(wrong.length === 0, `${coding}: every stylesheet, script and fragment came in ${coding}`,
    JSON.stringify(wrong));
  check([...codings.keys()].some((u) => u.includes('/fragments/')), `${coding}: fragments were fetched`);
  const wholePage = await pg.evaluate(() => document.documentElement.outerHTML.trimEnd().endsWith('</html>'));
  check(wholePage, `${coding}: the page is whole (ends with </html>)`);
  check(errors.length === 0, `${coding}: no failed request, no console error`, errors.join('\n     '));

  // The large fragment as a document: every point and the last element.
  const resp = await pg.goto(new URL('fragments/big-plot.html', folio.url).href, { waitUntil: 'load', timeout: LOAD_MS });
  check(resp.headers()['content-encoding'] === coding, `${coding}: the 2.3 MB fragment came in ${coding}`,
    resp.headers()['content-encoding']);
  const shape = await pg.evaluate(() => ({ points: document.querySelectorAll('circle').length,
    end: !!document.getElementById('the-end') }));
  check(shape.points === POINTS && shape.end, `${coding}: the 2.3 MB fragment decoded whole`, JSON.stringify(shape));
  const wire = Number(resp.headers()['content-length'] || 0);
  check(wire > 0 && wire * 4 < big.length, `${coding}: sent in under a quarter of its size`, `${wire} of ${big.length}`);
  console.log(`     ${coding}: the 2.3 MB fragment in ${wire} bytes`);
  await pg.close();
}

try {
  folio = await startFolio({ root, args: ['--production'] });
  browser = await launchBrowser();
  const context = await browser.newContext();
  await article(context, 'br', null);
  await article(context, 'zstd', 'zstd');
} catch (e) {
  check(false, 'the run completes', e.stack || String(e));
} finally {
  await cleanup();
}
process.exit(checks.finish());
