// Page edits on a distill page whose template rewrites the live DOM (issue 33, item 5), in
// Debian's Chromium: the large page as distill serves it (tests/fixtures/large-page.mjs,
// largePage({ distill: true }) and its template.js: custom elements rendering into shadow roots,
// a byline inserted before the article, a table of contents at its start, ids on headings,
// $$...$$ text turned into spans, a footer appended). A text edit, a formula's edit and a
// section added are patched in place, around what the template inserted, which stays; an edit
// inside text the template rewrote reloads (the only safe answer). Ends with "N passed, M failed".
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFolio } from '../lib/folio.mjs';
import { launchBrowser } from '../lib/browser.mjs';
import { assert, waitFor, STEP_MS } from '../lib/live.mjs';
import { runSteps } from '../lib/steps.mjs';
import { largePage, largeCss, distillTemplate } from '../fixtures/large-page.mjs';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-distill-'));
for (const d of ['www', 'fragments', 'assets']) fs.mkdirSync(path.join(root, d));
const opts = { edited: 'Version 0', distill: true };
const page = () => path.join(root, 'www/index.html');
fs.writeFileSync(page(), largePage(opts));
fs.writeFileSync(path.join(root, 'www/style.css'), largeCss(0));
fs.writeFileSync(path.join(root, 'www/template.js'), distillTemplate());

const folio = await startFolio({ root });
const browser = await launchBrowser();
const pg = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
const noise = [];
pg.on('pageerror', (e) => noise.push(e.message));
let navigations = 0;
pg.on('framenavigated', (f) => { if (f === pg.mainFrame()) navigations++; });
const status = () => pg.evaluate(() => ({ ...window.__folioReload }));

// Writes src as the page and waits for it to be patched in: no navigation, the template's
// insertions the very same objects.
async function patched(src, what) {
  const before = await status(), nav = navigations;
  await pg.evaluate(() => {
    window.__kept = [document.querySelector('d-byline'), document.querySelector('d-contents'),
      document.querySelector('distill-footer')];
  });
  fs.writeFileSync(page(), src);
  await waitFor(pg, (n) => window.__folioReload.patched > n, before.patched, what);
  assert(navigations === nav, 'the page reloaded');
  assert(await pg.evaluate(() => window.__kept.every((el) => el && el.isConnected) &&
    document.querySelector('d-article').firstElementChild === window.__kept[1]), 'what the template inserted is gone or moved');
}

const steps = [];
const step = (name, fn) => steps.push({ name, fn });

step('the template has rewritten the page', async () => {
  await pg.goto(folio.url, { waitUntil: 'load', timeout: STEP_MS * 2 });
  await waitFor(pg, () => window.__folioReload && window.__folioReload.ready && window.__folioReload.settled > 0, null,
    'the client to know the page');
  const shape = await pg.evaluate(() => ({
    byline: document.querySelector('d-article').previousElementSibling.localName,
    contents: document.querySelector('d-article').firstElementChild.localName,
    footer: document.body.lastElementChild.localName,
    ids: document.querySelectorAll('d-article h2[id]').length,
    rendered: document.querySelectorAll('d-article p > .katex').length,
    math: document.querySelector('#edited d-math').shadowRoot !== null,
  }));
  assert(shape.byline === 'd-byline' && shape.contents === 'd-contents' && shape.footer === 'distill-footer' &&
    shape.ids > 50 && shape.rendered > 50 && shape.math, JSON.stringify(shape));
});

step('a text edit in the middle is patched in, no reload', async () => {
  await pg.evaluate(() => document.getElementById('edited').scrollIntoView());
  opts.edited = 'Version 1';
  await patched(largePage(opts), 'the text edit');
  assert(await pg.evaluate(() => document.getElementById('edited').textContent.startsWith('Version 1 ')), 'not shown');
});

step('a formula edited: patched, and the template renders it again', async () => {
  const src = fs.readFileSync(page(), 'utf8');
  const at = src.indexOf('<d-math>', src.indexOf('id="edited"'));
  const end = src.indexOf('</d-math>', at);
  await patched(src.slice(0, at) + '<d-math>omega = 42' + src.slice(end), 'the formula');
  await waitFor(pg, () => /omega/.test(document.querySelector('#edited d-math').shadowRoot.textContent), null,
    'the formula rendered again');
});

step('a section added above the viewport: patched around the table of contents', async () => {
  opts.insert = 20;
  await patched(largePage(opts), 'the new section');
  assert(await pg.evaluate(() => document.getElementById('inserted').previousElementSibling.id === 's20'), 'misplaced');
});

step('an edit inside text the template rewrote ($$...$$ made spans) reloads', async () => {
  const src = fs.readFileSync(page(), 'utf8');
  const at = src.indexOf('$$', src.indexOf('<section id="s30"'));
  assert(at > 0, 'no $$ in section 30');
  const nav = navigations;
  fs.writeFileSync(page(), src.slice(0, at) + 'changed words ' + src.slice(at));
  const t = Date.now();
  while (navigations === nav && Date.now() - t < STEP_MS) await new Promise((r) => setTimeout(r, 10));
  assert(navigations > nav, 'no reload: a patch would have lost the rendered math');
});

step('no page errors', async () => {
  assert(noise.length === 0, noise.join('\n'));
});

await runSteps(steps, {
  folio,
  finish: async () => {
    await browser.close().catch(() => {});
    try { await folio.stop(); } finally { fs.rmSync(root, { recursive: true, force: true }); }
  },
});
