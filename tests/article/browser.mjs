// The article in headless Chromium, served by folio: every fragment is filled, the
// interactive fragments react to input and survive re-injection, a missing fragment shows a
// polite error without retries, the contents track the reader, media and the iframe load,
// and nothing logs an error or fails a request. Screenshots go to $FOLIO_ARTIFACTS.
import fs from 'node:fs';
import path from 'node:path';
import { startFolio } from '../lib/folio.mjs';
import { launchBrowser } from '../lib/browser.mjs';
import { SOURCE_ROOT, tally, watchdog } from './common.mjs';

const t = tally('article-browser');
const ARTIFACTS = process.env.FOLIO_ARTIFACTS || path.join(SOURCE_ROOT, 'build', 'artifacts');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const shot = (name) => path.join(ARTIFACTS, `article-${name}.png`);

let folio, browser;
const cleanup = async () => { await browser?.close().catch(() => {}); await folio?.stop().catch(() => {}); };
watchdog(110000, cleanup);

const MISSING = '__missing_for_test__';
const INTERACTIVE = {
  'memory-calculator': [
    { label: 'model 70B', chart: '.mc-chart', act: (p) => p.selectOption('#mc-model', '70') },
    { label: 'full recomputation', chart: '.mc-chart', act: (p) => p.selectOption('#mc-recompute', 'full') },
    { label: 'ZeRO-3', chart: '.mc-chart', act: (p) => p.selectOption('#mc-zero', '3') },
  ],
  'parallelism-explorer': [
    { label: 'TP 4', chart: '.pe-chart', act: (p) => p.selectOption('#pe-tp', '4') },
    { label: 'CP 2', chart: '.pe-chart', act: (p) => p.selectOption('#pe-cp', '2') },
  ],
  'pipeline-schedule': [
    { label: 'GPipe', chart: '.ps-chart', act: (p) => p.check('#fragment-pipeline-schedule input[value="gpipe"]') },
    { label: '16 micro-batches', chart: '.ps-chart', act: (p) => setRange(p, '#ps-micro', 16) },
  ],
  'config-sweep': [
    { label: 'only fitting configurations', chart: '.sweep-count', act: (p) => p.check('#sweep-fit') },
  ],
};

async function setRange(page, sel, value) {
  await page.$eval(sel, (el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
}

function watch(page, problems, allow404 = []) {
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const where = m.location()?.url || '';
    if (/Failed to load resource/.test(m.text()) && allow404.some((s) => where.includes(s))) return;
    problems.push(`console error: ${m.text()} ${where}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => {
    const why = r.failure()?.errorText || '';
    if (/ERR_ABORTED/.test(why) && /\.(ogg|svg|png|jpg|webp)$/.test(new URL(r.url()).pathname)) return; // media cancelled on navigation
    problems.push(`request failed: ${r.url()} ${why}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !allow404.some((s) => r.url().includes(s))) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
}

async function allFragmentsSettled(page, timeout = 20000) {
  await page.waitForFunction(() => {
    const els = [...document.querySelectorAll('[id^="fragment-"]')];
    return els.length > 0 && els.every((e) => ['loaded', 'error'].includes(e.getAttribute('data-fragment-state')));
  }, null, { timeout });
}

try {
  folio = await startFolio({ root: SOURCE_ROOT });
  browser = await launchBrowser();

  // ---- light mode, desktop ------------------------------------------------------------------
  const ctx = await browser.newContext({ viewport: { width: 1366, height: 900 }, colorScheme: 'light' });
  const page = await ctx.newPage();
  const problems = [];
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  watch(page, problems, [MISSING]);
  await page.goto(folio.url, { waitUntil: 'load', timeout: 30000 });
  await allFragmentsSettled(page);
  t.ok(true, 'page loads and every fragment settles');

  const frags = await page.$$eval('[id^="fragment-"]', (els) => els.map((e) => ({
    id: e.id, state: e.getAttribute('data-fragment-state'), children: e.children.length,
    loading: !!e.querySelector('.fragment-loading'), text: e.textContent.trim().length,
  })));
  t.ok(frags.length >= 4, 'page has 4+ fragment elements', `found ${frags.length}`);
  for (const f of frags) {
    t.ok(f.state === 'loaded' && f.children > 0 && !f.loading && f.text > 0, `#${f.id} is filled`, `state=${f.state} children=${f.children}`);
  }
  await page.screenshot({ path: shot('top') });

  // Every fragment script ran once: one bound widget per interactive fragment.
  for (const name of ['memory-calculator', 'parallelism-explorer', 'pipeline-schedule']) {
    const n = await page.$$eval(`#fragment-${name} [data-bound="1"]`, (els) => els.length);
    t.ok(n === 1, `#fragment-${name} script ran`, `${n} bound widgets`);
    t.ok(await page.$(`#fragment-${name} svg`) !== null, `#fragment-${name} drew an SVG`);
  }

  // Controls change the output.
  for (const [name, steps] of Object.entries(INTERACTIVE)) {
    const root = `#fragment-${name}`;
    await page.locator(root).scrollIntoViewIfNeeded();
    for (const step of steps) {
      const before = await page.$eval(`${root} ${step.chart}`, (e) => e.innerHTML);
      await step.act(page);
      await page.waitForFunction(([sel, html]) => document.querySelector(sel)?.innerHTML !== html,
        [`${root} ${step.chart}`, before], { timeout: 5000 }).catch(() => {});
      const after = await page.$eval(`${root} ${step.chart}`, (e) => e.innerHTML);
      t.ok(after !== before, `${name} reacts to ${step.label}`);
    }
    if (name !== 'config-sweep') await page.locator(root).screenshot({ path: shot(`fragment-${name}`) });
  }
  // The calculator's activations bar shrinks with full recomputation (a sanity check on the numbers).
  const actWidth = async () => +(await page.$eval('#fragment-memory-calculator .mc-seg-act', (e) => e.getAttribute('width')));
  await page.selectOption('#mc-recompute', 'none');
  const wNone = await actWidth();
  await page.selectOption('#mc-recompute', 'full');
  const wFull = await actWidth();
  t.ok(wFull < wNone, 'full recomputation shrinks the activations bar', `${wNone} -> ${wFull}`);

  // Re-injection (what live reload does) leaves one working widget, not two.
  await page.evaluate(() => window.folioFragments.reload('memory-calculator'));
  await page.waitForFunction(() => document.getElementById('fragment-memory-calculator').getAttribute('data-fragment-state') === 'loaded');
  const bound = await page.$$eval('#fragment-memory-calculator [data-bound="1"]', (els) => els.length);
  t.ok(bound === 1, 're-injected memory calculator is bound once', `${bound}`);
  const before = await page.$eval('#fragment-memory-calculator .mc-chart', (e) => e.innerHTML);
  await page.selectOption('#mc-model', '13');
  const after = await page.$eval('#fragment-memory-calculator .mc-chart', (e) => e.innerHTML);
  t.ok(before !== after, 're-injected memory calculator still reacts');

  // A missing fragment: one request (404 is final), a visible polite message in place.
  const missingUrl = `fragments/${MISSING}.html`;
  await page.evaluate((name) => {
    const el = document.createElement('div');
    el.id = 'fragment-' + name;
    document.querySelector('#cheat-sheet').appendChild(el);
    return window.folioFragments.reload(name);
  }, MISSING);
  await page.waitForFunction((id) => document.getElementById(id)?.getAttribute('data-fragment-state') === 'error', `fragment-${MISSING}`, { timeout: 5000 }).catch(() => {});
  const missing = await page.$eval(`#fragment-${MISSING}`, (e) => ({ state: e.getAttribute('data-fragment-state'), text: e.innerText, visible: e.offsetHeight > 0 }));
  t.ok(missing.state === 'error', 'missing fragment ends in the error state', missing.state);
  t.ok(/could not be loaded/i.test(missing.text) && missing.text.includes(missingUrl) && missing.visible, 'missing fragment shows a visible message naming it', missing.text);
  await page.waitForTimeout(1200);   // a retry would have fired after 1 s
  t.ok(requests.filter((u) => u.includes(missingUrl)).length === 1, 'a 404 fragment is not retried');
  await page.evaluate((id) => document.getElementById(id).remove(), `fragment-${MISSING}`);

  // The table of contents follows the reader.
  for (const id of ['pipeline-parallelism', 'kernels', 'data-parallelism']) {
    await page.evaluate((i) => { document.documentElement.style.scrollBehavior = 'auto'; document.getElementById(i).scrollIntoView(); }, id);
    await page.waitForFunction((i) => document.querySelector('#toc a.active')?.getAttribute('href') === '#' + i, id, { timeout: 3000 }).catch(() => {});
    const active = await page.$eval('#toc', (e) => e.querySelector('a.active')?.getAttribute('href'));
    t.ok(active === '#' + id, `contents highlight #${id} when it is read`, `active=${active}`);
  }
  await page.locator('#band-pipeline').scrollIntoViewIfNeeded();
  await page.locator('#band-pipeline').screenshot({ path: shot('wide-figure') });

  // Every image decodes (lazy images forced to load), the audio's metadata loads, the iframe works.
  await page.evaluate(() => document.querySelectorAll('img[loading="lazy"]').forEach((i) => { i.loading = 'eager'; }));
  await page.waitForFunction(() => [...document.images].every((i) => i.complete), null, { timeout: 15000 }).catch(() => {});
  const broken = await page.$$eval('img', (imgs) => imgs.filter((i) => !(i.complete && i.naturalWidth > 0)).map((i) => i.currentSrc || i.src));
  t.ok(broken.length === 0, 'every image decodes', broken.join(', '));
  const duration = await page.evaluate(() => new Promise((resolve) => {
    const a = document.querySelector('audio');
    if (a.readyState >= 1) return resolve(a.duration);
    a.addEventListener('loadedmetadata', () => resolve(a.duration), { once: true });
    a.addEventListener('error', () => resolve(-1), { once: true });
    a.load();
    setTimeout(() => resolve(a.readyState >= 1 ? a.duration : -2), 8000);
  }));
  t.ok(duration > 1 && duration < 60, 'the audio clip loads (file name with a space and a comma)', `duration ${duration}`);
  const frame = page.frameLocator('#fig-roofline-iframe iframe');
  const frameText = await frame.locator('#result').textContent({ timeout: 10000 }).catch((e) => 'error: ' + e.message);
  t.ok(/TFLOP\/s/.test(frameText), 'the iframe page loads its JSON and renders', frameText);

  // Anchor navigation to a reference works.
  await page.click('a.cite[href="#ref-zero"]');
  t.ok(await page.evaluate(() => location.hash === '#ref-zero' && document.querySelector('#ref-zero:target') !== null), 'citation links jump to their reference');

  t.ok(problems.length === 0, 'no console errors or failed requests (light, desktop)', problems.join(' | '));
  await ctx.close();

  // ---- dark mode and a phone ----------------------------------------------------------------
  for (const [label, opts] of [
    ['dark', { viewport: { width: 1366, height: 900 }, colorScheme: 'dark' }],
    ['phone', { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, colorScheme: 'light' }],
  ]) {
    const c = await browser.newContext(opts);
    const p = await c.newPage();
    const probs = [];
    watch(p, probs);
    await p.goto(folio.url, { waitUntil: 'load', timeout: 30000 });
    await allFragmentsSettled(p);
    const states = await p.$$eval('[id^="fragment-"]', (els) => els.map((e) => e.getAttribute('data-fragment-state')));
    t.ok(states.every((s) => s === 'loaded'), `${label}: every fragment loads`, states.join(','));
    const bg = await p.evaluate(() => getComputedStyle(document.body).backgroundColor);
    if (label === 'dark') t.ok(/rgb\((\d+), (\d+), (\d+)\)/.test(bg) && +bg.match(/\d+/)[0] < 60, 'dark: the page is dark', bg);
    if (label === 'phone') {
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      t.ok(overflow <= 1, 'phone: no horizontal scrolling of the page', `${overflow}px too wide`);
    }
    await p.screenshot({ path: shot(`top-${label}`) });
    if (label === 'phone') {
      await p.locator('#fragment-memory-calculator').scrollIntoViewIfNeeded();
      await p.locator('#fragment-memory-calculator').screenshot({ path: shot('phone-memory-calculator') });
    }
    t.ok(probs.length === 0, `${label}: no console errors or failed requests`, probs.join(' | '));
    await c.close();
  }
  console.log(`screenshots in ${ARTIFACTS}`);
} catch (e) {
  t.ok(false, 'browser run', e.stack || e.message);
} finally {
  await cleanup();
}
t.finish();
