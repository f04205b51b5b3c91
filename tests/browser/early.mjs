// Errors a page throws before folio's client has run, in Debian's Chromium: the client's first
// part (__folio/early.js, put before the page's scripts) hears them from the page's first byte
// on and hands them to the rest (reload.js, deferred, before </head>), which reports them.
//
// Pages whose inline <head> script throws, whose inline <body> script throws, whose deferred
// script (ordered before the client) throws, whose first script (same-origin, under a
// Content-Security-Policy of 'self' scripts only) throws, rejects and logs at once, and one with
// no <head> at all (the folder's index.html, loaded as the folder). Each error is printed by
// folio once, with file:line:column as the browser reports them for the page unmodified (the
// injected tags move no line, and no column of the author's scripts), and listed in the page's
// live panel. The page pays for it one request at most: the first part is fetched once, then
// kept by the browser. Every wait is bounded.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFolio } from '../lib/folio.mjs';
import { launchBrowser } from '../lib/browser.mjs';
import { assert, waitFor, STEP_MS } from '../lib/live.mjs';
import { runSteps } from '../lib/steps.mjs';

const HEAD = (title, more = '') => `<!doctype html>
<html lang=en>
<head>
<meta charset=utf-8>
<meta name=viewport content="width=device-width, initial-scale=1">${more}
<title>${title}</title>`;

const PAGES = {
  'head.html': `${HEAD('An inline head script')}
<script>
  window.ranHead = true;
  throw new Error('head boom');
</script>
</head>
<body><h1>Head</h1></body>
</html>
`,
  'body.html': `${HEAD('An inline body script')}
</head>
<body>
<h1>Body</h1>
<script>window.ranBody = true; throw new TypeError('body boom');</script>
<p>After it.</p>
</body>
</html>
`,
  'deferred.html': `${HEAD('A deferred script before the client')}
<script src="deferred.js" defer></script>
</head>
<body><h1>Deferred</h1></body>
</html>
`,
  'first.html': `${HEAD('Its first script', `\n<meta http-equiv="Content-Security-Policy" content="script-src 'self'">`)}
<script src="first.js"></script>
</head>
<body><h1>First</h1></body>
</html>
`,
  'index.html': `<!doctype html>
<title>No head</title>
<script>throw new RangeError('nohead boom');</script>
<p>A page without a head element.</p>
`,
};
const SCRIPTS = {
  'deferred.js': `window.ranDeferred = true;\nthrow new Error('deferred boom');\n`,
  'first.js': `window.ranFirst = true;
console.error('first console', 1);
Promise.reject(new Error('first rejection'));
throw new Error('first boom');
`,
};

function makeArticle() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-early-'));
  for (const d of ['www', 'fragments', 'assets']) fs.mkdirSync(path.join(root, d));
  for (const [name, text] of Object.entries({ ...PAGES, ...SCRIPTS })) fs.writeFileSync(path.join(root, 'www', name), text);
  return root;
}

// What the browser itself reports for a page as its author wrote it: the page fetched from disk
// (no client in it), errors heard by a listener added before any of the page's scripts.
async function truth(browser, url, file) {
  const ctx = await browser.newContext();
  try {
    await ctx.addInitScript(() => {
      window.__heard = [];
      addEventListener('error', (e) => window.__heard.push({ message: e.message, line: e.lineno, column: e.colno }));
    });
    await ctx.route(url, (r) => r.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: fs.readFileSync(file) }));
    const pg = await ctx.newPage();
    await pg.goto(url, { waitUntil: 'load', timeout: STEP_MS });
    return await pg.evaluate(() => window.__heard);
  } finally {
    await ctx.close();
  }
}

const root = makeArticle();
const browser = await launchBrowser();
const folio = await startFolio({ root });
const ctx = await browser.newContext({ viewport: { width: 1000, height: 700 } });
const err = [];   // folio's stderr, line by line, from the start
let buf = '', loads = 0;
folio.proc.stderr.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) { err.push(buf.slice(0, i)); buf = buf.slice(i + 1); }
});

async function said(re, what, ms = STEP_MS) {
  const t = Date.now();
  while (Date.now() - t < ms) {
    const line = err.find((l) => re.test(l));
    if (line) return line;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`folio did not say ${what} within ${ms} ms; stderr:\n${err.slice(-15).join('\n')}`);
}
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// Opens a page; waits until its client is up and its panel lists @want (the page's own word).
async function open(name, want) {
  const pg = await ctx.newPage();
  await pg.goto(folio.url + name, { waitUntil: 'load', timeout: STEP_MS });
  loads++;
  await waitFor(pg, (w) => window.__folioReload && window.__folioReload.ready &&
    w.every((x) => ((document.getElementById('folio-check') || {}).textContent || '').includes(x)), want,
  `/${name}: the client up and ${want.join(', ')} in the panel`);
  return pg;
}

const steps = [];
const step = (name, fn) => steps.push({ name, fn });

// The inline scripts: file:line:column as the browser reports them for the page unmodified.
// The page without a head is the folder's index.html, loaded as the folder ("/"): named so.
for (const [name, message, kind] of [['head.html', 'head boom', 'Error'], ['body.html', 'body boom', 'TypeError'],
  ['index.html', 'nohead boom', 'RangeError']]) {
  const at = name === 'index.html' ? '' : name;
  step(`${name}: an inline script that throws while the page parses`, async () => {
    const [want] = await truth(browser, folio.url + at, path.join(root, 'www', name));
    assert(want && want.message.endsWith(message), `the browser itself heard ${JSON.stringify(want)}`);
    await open(at, [message]);
    await said(new RegExp(`^folio: browser: Uncaught ${kind}: ${message} \\(${escape(name)}:${want.line}:${want.column}; ` +
      'HeadlessChrome \\d+, 1000 px\\)$'), `${message} at ${name}:${want.line}:${want.column}`);
  });
}

step('deferred.html: a deferred script ordered before the client throws', async () => {
  const [want] = await truth(browser, folio.url + 'deferred.html', path.join(root, 'www/deferred.html'));
  const pg = await open('deferred.html', ['deferred boom']);
  assert(await pg.evaluate(() => window.ranDeferred), 'the deferred script did not run');
  await said(new RegExp(`^folio: browser: Uncaught Error: deferred boom \\(deferred\\.js:${want.line}:${want.column}; `),
    `deferred boom at deferred.js:${want.line}:${want.column}`);
});

step('first.html: the first script, under a CSP of \'self\' scripts, throws, rejects and logs at once', async () => {
  const [want] = await truth(browser, folio.url + 'first.html', path.join(root, 'www/first.html'));
  const pg = await open('first.html', ['first boom', 'first rejection', 'first console']);
  assert(await pg.evaluate(() => window.ranFirst), 'the first script did not run');
  await said(new RegExp(`^folio: browser: Uncaught Error: first boom \\(first\\.js:${want.line}:${want.column}; `),
    `first boom at first.js:${want.line}:${want.column}`);
  await said(/^folio: browser: Unhandled rejection: Error: first rejection \(first\.js:3:16; /, 'the rejection');
  await said(/^folio: browser: console\.error: first console 1 \(first\.js:2:9; /, 'the console.error');
});

step('each printed once; the first part fetched once for all these pages', async () => {
  // A page loaded again repeats its error: a count line, never the first line again.
  const again = await open('head.html', ['head boom']);
  await again.evaluate(() => console.error('the marker after the pages'));
  await said(/the marker after the pages/, 'the marker');
  for (const m of ['head boom', 'body boom', 'nohead boom', 'deferred boom', 'first boom', 'first rejection', 'first console']) {
    const firsts = err.filter((l) => l.includes(': ' + m) && !l.includes('the same again'));
    assert(firsts.length === 1, `${m}: ${firsts.length} lines\n${err.join("\n")}`);
  }
  const fetched = folio.log.filter((l) => /"GET \/__folio\/early\.js\?v=[0-9a-f]{8} HTTP\/1\.1" 200/.test(l));
  assert(fetched.length === 1, `early.js fetched ${fetched.length} times for ${loads} page loads:\n${fetched.join('\n')}`);
});

await runSteps(steps, {
  folio,
  finish: async () => {
    await ctx.close().catch(() => {});
    await browser.close().catch(() => {});
    try {
      await folio.stop();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  },
});
