// Preview on every device at once, in Debian's Chromium (issue 33): follow mode between a
// 1366 px desktop and a 390 px phone (two browser contexts: two devices, a stream each), and
// the errors a page throws, in folio's terminal and in the live panel; a page of another
// origin can neither scroll the tabs nor write to the terminal.
//
// The article: a long page whose text reflows differently at the two widths (so a pixel or a
// percentage would land on other words), a fragment with an inner target, and a page that
// throws every way a page can. Each wait is bounded; "within 1 s" is measured, not slept.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startFolio } from '../lib/folio.mjs';
import { launchBrowser } from '../lib/browser.mjs';
import { assert, waitFor, STEP_MS } from '../lib/live.mjs';
import { runSteps } from '../lib/steps.mjs';

const QUIET_MS = 1000; // how long "nothing moves" is watched for

const LOADER = `(function () {
  document.querySelectorAll('[id^="fragment-"]').forEach(function (el) {
    var name = el.id.slice('fragment-'.length);
    fetch('fragments/' + name + '.html').then(function (r) { return r.text(); }).then(function (html) {
      el.innerHTML = html;
      el.querySelectorAll('script').forEach(function (old) {
        var s = document.createElement('script');
        s.textContent = old.textContent;
        old.parentNode.replaceChild(s, old);
      });
      el.setAttribute('data-fragment-state', 'loaded');
    });
  });
})();
`;

const words = (n, seed) => Array.from({ length: n }, (_, i) => ['memory', 'gradient', 'shard', 'tensor',
  'pipeline', 'bandwidth', 'activation', 'optimizer'][(i * 7 + seed) % 8]).join(' ');

function longPage() {
  const sections = [];
  for (let s = 1; s <= 40; s++) {
    const paras = Array.from({ length: 3 }, (_, p) => `<p>${words(60 + ((s * 13 + p * 7) % 50), s + p)}.</p>`);
    const frag = s === 25 ? '\n<div id="fragment-widget"><p>Loading…</p></div>' : '';
    const more = s === 9 ? '\n<details><summary>The derivation</summary><p>' + words(90, 2) + '.</p></details>' : '';
    sections.push(`<section id="s${s}">\n<h2 id="h${s}">Section ${s}</h2>\n${paras.join('\n')}${more}${frag}\n</section>`);
  }
  return `<!doctype html>
<html lang=en>
<head>
<meta charset=utf-8>
<meta name=viewport content="width=device-width, initial-scale=1">
<title>Follow</title>
<style>
  html { scroll-behavior: smooth; } /* as the real article's: a followed place still lands at once */
  body { margin: 0; font: 18px/1.6 serif; }
  main { max-width: 60em; margin: 0 auto; padding: 0 2em; }
  aside.toc { display: none; }
  @media (min-width: 1000px) { aside.toc { display: block; position: fixed; left: 0; top: 0; width: 10em; } main { margin-left: 12em; } }
  @media (max-width: 600px) { body { font-size: 16px; } main { padding: 0 1em; } }
</style>
<script src=loader.js defer></script>
</head>
<body>
<aside class=toc><a href="#h1">Start</a></aside>
<main>
<h1 id=title>Follow</h1>
${sections.join('\n')}
</main>
</body>
</html>
`;
}

const WIDGET = `<div class="widget"><p>${words(120, 3)}.</p>
<div class="inner" id="widget-inner"><h3>The widget's inner part</h3><p>${words(80, 5)}.</p></div>
<p>${words(150, 1)}.</p></div>
`;

// A page that throws every way a page can, once loaded: a fragment's inline script, a rejected
// promise, console.error, an error thrown 1,000 times, and a 1 MB console.error.
// (Errors thrown while the page parses, before the client runs: browser/early.mjs.)
const FAULTS_PAGE = `<!doctype html>
<html lang=en><head><meta charset=utf-8><title>Faults</title>
<meta name=viewport content="width=device-width, initial-scale=1">
</head><body>
<h1>Faults</h1>
<p><a href="missing-page.html">a link to a page that is not there</a></p>
<div id="fragment-boom"><p>Loading…</p></div>
<script src=loader.js defer></script>
<script src=faults.js defer></script>
</body></html>
`;
const FAULTS_JS = `window.addEventListener('load', function () {
  setTimeout(function () {
    Promise.reject(new Error('rejected boom'));
    console.error('logged boom', 42);
  }, 30);
});
window.throwMany = function (n) {
  for (var i = 0; i < n; i++) setTimeout(function () { throw new Error('again boom'); });
};
window.logHuge = function () { console.error('H'.repeat(1 << 20)); };
`;
const BOOM = `<p>boom</p>
<script>
  throw new Error('fragment boom');
</script>
`;

function makeArticle() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-devices-'));
  for (const d of ['www', 'fragments', 'assets']) fs.mkdirSync(path.join(root, d));
  fs.writeFileSync(path.join(root, 'www/index.html'), longPage());
  fs.writeFileSync(path.join(root, 'www/loader.js'), LOADER);
  fs.writeFileSync(path.join(root, 'www/faults.html'), FAULTS_PAGE);
  fs.writeFileSync(path.join(root, 'www/faults.js'), FAULTS_JS);
  fs.writeFileSync(path.join(root, 'fragments/widget.html'), WIDGET);
  fs.writeFileSync(path.join(root, 'fragments/boom.html'), BOOM);
  return root;
}

const root = makeArticle();
const browser = await launchBrowser();
const DESKTOP = { viewport: { width: 1366, height: 800 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
let folio = null, plain = null, evil = null;
const contexts = [];

async function open(ctx, url) {
  const pg = await ctx.newPage();
  await pg.goto(url, { waitUntil: 'load', timeout: STEP_MS * 2 });
  await waitFor(pg, () => window.__folioReload && window.__folioReload.ready && window.__folioReload.hellos > 0 &&
    document.querySelector('[data-fragment-state=loaded]') !== null, null, 'the page, its stream and its fragment');
  return pg;
}
async function device(opts, url) {
  const ctx = await browser.newContext(opts);
  contexts.push(ctx);
  return open(ctx, url);
}
// Scrolls the element matching sel to the viewport's top, as a reader's click on a link does.
const scrollTo = (pg, sel) => pg.evaluate((s) => document.querySelector(s).scrollIntoView({ block: 'start', behavior: 'instant' }), sel);
const topOf = (pg, sel) => pg.evaluate((s) => document.querySelector(s).getBoundingClientRect().top, sel);
// Waits until sel is within 100 px of pg's top; returns the ms it took from `since`.
async function shows(pg, sel, since) {
  await waitFor(pg, (s) => Math.abs(document.querySelector(s).getBoundingClientRect().top) <= 100, sel,
    `${sel} at the top`, 3000);
  return Date.now() - since;
}
// Every stderr line of f, from the start (f.log keeps the last 200 lines of both streams).
function collect(f) {
  f.err = [];
  let buf = '';
  f.proc.stderr.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) { f.err.push(buf.slice(0, i)); buf = buf.slice(i + 1); }
  });
  return f;
}
const stderr = (f) => f.err;
async function said(f, re, what, ms = STEP_MS) {
  const t = Date.now();
  while (Date.now() - t < ms) {
    const line = stderr(f).find((l) => re.test(l));
    if (line) return { line, ms: Date.now() - t };
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`folio did not say ${what} within ${ms} ms; stderr:\n${stderr(f).slice(-15).join('\n')}`);
}

const steps = [];
const step = (name, fn) => steps.push({ name, fn });
let desk = null, phone = null;

step('--follow: both devices start following', async () => {
  folio = collect(await startFolio({ root, args: ['--follow'] }));
  desk = await device(DESKTOP, folio.url);
  phone = await device(PHONE, folio.url);
  for (const pg of [desk, phone]) await waitFor(pg, () => window.__folioReload.follow === true, null, 'follow on');
  const lines = await Promise.all([desk, phone].map((pg) => pg.evaluate(() => document.getElementById('s20').offsetHeight)));
  assert(lines[0] !== lines[1], `the text reflows differently at 1366 and 390 px (${lines})`);
});

step('the desktop scrolls to a heading deep in the article: the phone shows it within 1 s', async () => {
  const t = Date.now();
  await scrollTo(desk, '#h31');
  const ms = await shows(phone, '#h31', t);
  assert(ms < 1000, `${ms} ms`);
  assert(Math.abs(await topOf(desk, '#h31')) <= 1, 'the desktop moved back');
});

step('the phone scrolls to another heading: the desktop shows it within 1 s', async () => {
  const t = Date.now();
  await scrollTo(phone, '#h12');
  const ms = await shows(desk, '#h12', t);
  assert(ms < 1000, `${ms} ms`);
});

step('a fragment\'s inner element: the desktop goes there, the phone follows', async () => {
  const t = Date.now();
  await scrollTo(desk, '#widget-inner');
  const ms = await shows(phone, '#widget-inner', t);
  assert(ms < 1000, `${ms} ms`);
});

step('a details opened on the phone opens on the desktop, and closes', async () => {
  for (const open of [true, false]) {
    const t = Date.now();
    await phone.evaluate((o) => { document.querySelector('#s9 details').open = o; }, open);
    await waitFor(desk, (o) => document.querySelector('#s9 details').open === o, open, `the desktop's details ${open ? 'open' : 'closed'}`, 3000);
    assert(Date.now() - t < 1000, `${Date.now() - t} ms`);
  }
});

step('a scroll is at most one message a frame, and none in the access log', async () => {
  const places = () => desk.evaluate(() => window.__folioReload.places);
  const before = await places();
  // Three scroll steps in each of 30 frames: 90 scroll events.
  const frames = await desk.evaluate(() => new Promise((resolve) => {
    let n = 0;
    (function step() {
      for (let i = 0; i < 3; i++) window.scrollBy(0, 15);
      if (++n < 30) requestAnimationFrame(step); else requestAnimationFrame(() => resolve(n + 1));
    })();
  }));
  const sent = (await places()) - before;
  assert(sent >= 1 && sent <= frames, `${sent} places for ${frames} frames`);
  // Taken reports leave no access-log line (a place each frame would drown the log).
  await desk.evaluate(() => fetch('index.html?after-the-places', { cache: 'no-store' }));
  const t = Date.now();
  while (!folio.log.some((l) => l.includes('after-the-places')) && Date.now() - t < STEP_MS) await new Promise((r) => setTimeout(r, 10));
  assert(folio.log.some((l) => l.includes('after-the-places')), 'the marker request is not in the access log');
  assert(!folio.log.some((l) => /"GET \/__folio\/report[^"]*" 204/.test(l)), 'a taken report in the access log');
});

step('a tab its reader is scrolling is not dragged mid-gesture', async () => {
  await scrollTo(desk, '#h5');
  await shows(phone, '#h5', Date.now());
  const held = await phone.evaluate(() => window.__folioReload.held);
  // The phone's reader has a finger on the screen, not lifted: however long the desktop's place
  // takes to come, it comes mid-gesture (a wheel's 800 ms could pass first on a busy machine).
  const finger = await phone.context().newCDPSession(phone);
  await finger.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: 200, y: 400 }] });
  await scrollTo(desk, '#h36');    // meanwhile, the desktop jumps far
  await waitFor(phone, (n) => window.__folioReload.held > n, held, 'the desktop\'s place, held back');
  assert(Math.abs(await topOf(phone, '#h36')) > 500, 'the phone was dragged to the desktop\'s place');
  // Once the finger is off (cancelled: a lifted one would tap what is under it), the desktop's
  // is the last place: the phone goes there.
  await finger.send('Input.dispatchTouchEvent', { type: 'touchCancel', touchPoints: [] });
  await finger.detach();
  await shows(phone, '#h36', Date.now());
});

step('without --follow nothing moves; Alt+Shift+F turns it on in a tab', async () => {
  plain = collect(await startFolio({ root }));
  const d = await device(DESKTOP, plain.url), p = await device(PHONE, plain.url);
  for (const pg of [d, p]) await waitFor(pg, () => window.__folioReload.follow === false && window.__folioReload.ready, null, 'follow off');
  const y = await p.evaluate(() => window.scrollY);
  await scrollTo(d, '#h30');
  const t = Date.now();
  await p.waitForFunction((y0) => window.scrollY !== y0, y, { timeout: QUIET_MS, polling: 10 })
    .then(() => { throw new Error(`the phone moved after ${Date.now() - t} ms`); }, () => {});
  assert(await d.evaluate(() => window.__folioReload.places) === 0, 'a place was sent with follow off');
  for (const pg of [d, p]) await pg.keyboard.press('Alt+Shift+KeyF');
  for (const pg of [d, p]) await waitFor(pg, () => window.__folioReload.follow === true, null, 'the key turned it on');
  const t2 = Date.now();
  await scrollTo(d, '#h8');
  const ms = await shows(p, '#h8', t2);
  assert(ms < 1000, `${ms} ms`);
});

let faults = null;
step('a page that throws: one line each on folio\'s stderr within 1 s, with file:line', async () => {
  const ctx = await browser.newContext(PHONE);
  contexts.push(ctx);
  faults = await ctx.newPage();
  await faults.goto(folio.url + 'faults.html', { waitUntil: 'load', timeout: STEP_MS * 2 });
  const loaded = Date.now();
  const want = [
    [/^folio: browser: Uncaught Error: fragment boom \(fragments\/boom\.html:3:\d+; HeadlessChrome \d+, 390 px\)$/, 'the fragment\'s error'],
    [/^folio: browser: Unhandled rejection: Error: rejected boom \(faults\.js:3:\d+; /, 'the rejection'],
    [/^folio: browser: console\.error: logged boom 42 \(faults\.js:4:\d+; /, 'the console.error'],
  ];
  for (const [re, what] of want) {
    await said(folio, re, what);
    assert(Date.now() - loaded < 1000, `${what}: ${Date.now() - loaded} ms after the page loaded`);
  }
});

step('an error thrown 1,000 times: one more line, with the count', async () => {
  const t = Date.now();
  await faults.evaluate(() => window.throwMany(1000));
  const { line } = await said(folio, /^folio: browser: the same again, 1000 times in all: Uncaught Error: again boom \(faults\.js:\d+:\d+;/,
    'the count', 3000);
  assert(line, 'no count line');
  assert(stderr(folio).filter((l) => l.includes('again boom')).length === 2, stderr(folio).join('\n'));
  assert(Date.now() - t < 3000, `${Date.now() - t} ms`);
});

step('a 1 MB console.error is cut, not stored', async () => {
  await faults.evaluate(() => window.logHuge());
  const { line } = await said(folio, /^folio: browser: console\.error: HHHH/, 'the huge one');
  assert(line.length < 1300, `${line.length} bytes on the terminal`);
  const kept = await faults.evaluate(() => fetch(new URL('../__folio/session', document.querySelector('script[src$="reload.js"]').src))
    .then((r) => r.json()).then((s) => s.faults.map((f) => f.message.length)));
  assert(kept.every((n) => n < 1100), `kept ${kept}`);
});

step('the panel shows the browser errors, and the article\'s broken link from the first load', async () => {
  await waitFor(faults, () => document.querySelectorAll('#folio-faults li').length >= 4, null, 'the errors in the panel')
    .catch(async (e) => { throw new Error(e.message + ': ' + await faults.evaluate(() => (document.getElementById('folio-check') || {}).innerHTML)); });
  const text = await faults.evaluate(() => document.getElementById('folio-check').textContent);
  assert(/fragment boom/.test(text) && /rejected boom/.test(text) && /again boom \(×1000\)/.test(text), text);
  const fresh = await device(DESKTOP, folio.url + 'faults.html');
  await waitFor(fresh, () => /missing-page\.html/.test((document.getElementById('folio-check') || {}).textContent || ''),
    null, 'the server\'s finding on the first load');
  await waitFor(fresh, () => /rejected boom/.test(document.getElementById('folio-check').textContent), null,
    'the errors so far on the first load');
});

step('another origin can neither scroll the tabs nor write to the terminal', async () => {
  evil = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<!doctype html><title>evil</title><script src="${folio.url}__folio/reload.js"></script>`);
  });
  await new Promise((r) => evil.listen(0, '127.0.0.1', r));
  const ctx = await browser.newContext(DESKTOP);
  contexts.push(ctx);
  const pg = await ctx.newPage();
  await pg.goto(`http://localhost:${evil.address().port}/`, { waitUntil: 'load' });
  const y = await phone.evaluate(() => window.scrollY);
  const outcome = await pg.evaluate(async (base) => {
    const out = [];
    const form = 'kind=place&from=evil&place=H2|0|1/70:h20';
    for (const headers of [{ 'X-Folio-Report': form }, { 'X-Folio-Key': 'x'.repeat(32), 'X-Folio-Report': 'kind=error&message=evil' }]) {
      out.push(await fetch(base + '__folio/report', { headers }).then((r) => r.status, () => 'blocked'));
    }
    out.push(await fetch(base + '__folio/session').then((r) => r.json()).then(() => 'read', () => 'blocked'));
    out.push(navigator.sendBeacon(base + '__folio/report?kind=error&message=evil') ? 'beacon' : 'no beacon');
    await new Promise((r) => { const i = new Image(); i.onload = i.onerror = r; i.src = base + '__folio/report?evil'; });
    return out;
  }, folio.url);
  assert(outcome[0] === 'blocked' && outcome[1] === 'blocked' && outcome[2] === 'blocked', JSON.stringify(outcome));
  // Its attempts have ended; a real page's report after them arrives, and nothing of theirs did.
  await faults.evaluate(() => console.error('the marker after the evil page'));
  await said(folio, /the marker after the evil page/, 'the marker');
  assert(!stderr(folio).some((l) => /evil/.test(l.replace('the marker after the evil page', ''))), stderr(folio).join('\n'));
  assert(await phone.evaluate(() => window.scrollY) === y, 'the phone moved');
  const refused = folio.log.filter((l) => /"GET \/__folio\/report[^"]*" 403/.test(l)).length;
  assert(refused >= 1, 'no refused report in the access log');
});

await runSteps(steps, {
  folio: folio || { log: [] },
  finish: async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser.close().catch(() => {});
    if (evil) evil.close();
    try {
      if (plain) await plain.stop();
      if (folio) await folio.stop();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  },
});
