// The real article in headless Chromium through a real nginx, under /article/.
//
// The repo's article (www/, fragments/, assets/) is copied to a temp folder and served by folio
// (--trust-proxy: nginx tells it the prefix in X-Forwarded-Prefix) behind nginx configured by the
// shipped config/nginx/folio.conf (variant B), both on 127.0.0.1. The page must load with no
// failed request and no console error, fill every fragment element, then follow live reload
// through nginx and the prefix: an edit of www/style.css changes a computed style with no
// navigation, an edit of a fragment is re-injected with no navigation. Every wait is bounded.
// Ends with "N passed, M failed"; exits 1 on failure. nginx and folio are always stopped.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startFolio } from '../lib/folio.mjs';
import { launchBrowser } from '../lib/browser.mjs';
import { makeChecks } from '../lib/checks.mjs';

const SOURCE_ROOT = process.env.FOLIO_SOURCE_ROOT ||
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SITE = path.join(SOURCE_ROOT, 'config', 'nginx', 'folio.conf');
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => fs.existsSync(p));
const PREFIX = '/article';
const STEP_MS = 5000;      // every wait for the page to react is bounded by this
const LOAD_MS = 15000;     // the whole article with its fragments
const TOTAL_MS = 150000;   // watchdog for the whole run

if (!NGINX) {
  console.log('nginx is not installed (apt-get install nginx-light): 0 passed, 0 failed');
  process.exit(77);
}

const checks = makeChecks();
const check = checks.check;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

function listening(port) {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    c.on('connect', () => { c.destroy(); resolve(true); });
    c.on('error', () => resolve(false));
  });
}

// nginx -p TMP in the foreground: the shipped site file with its upstream at folio's port and
// its two `listen 80;` (variant A, variant B) on free ports; logs and temp paths inside TMP.
async function startNginx(upstreamPort) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-nginx-'));
  let site = fs.readFileSync(SITE, 'utf8');
  const upstream = 'server 127.0.0.1:8000;';
  if (site.split(upstream).length !== 2) throw new Error('the site file should have one upstream server 127.0.0.1:8000');
  const ports = [await freePort(), await freePort()];
  let i = 0;
  site = site.replace(upstream, `server 127.0.0.1:${upstreamPort};`)
    .replace(/^(\s*)listen 80;/gm, (m, sp) => `${sp}listen 127.0.0.1:${ports[i++]};`);
  if (i !== 2) throw new Error('the site file should have two servers on `listen 80;`');
  fs.writeFileSync(path.join(tmp, 'folio.conf'), site);
  const t = tmp;
  fs.writeFileSync(path.join(tmp, 'nginx.conf'),
    (process.getuid() === 0 ? 'user root;\n' : '') +
    'worker_processes 1;\nevents { worker_connections 512; }\nhttp {\n' +
    `  access_log ${t}/access.log;\n  client_body_temp_path ${t}/client_body;\n` +
    `  proxy_temp_path ${t}/proxy;\n  fastcgi_temp_path ${t}/fastcgi;\n` +
    `  uwsgi_temp_path ${t}/uwsgi;\n  scgi_temp_path ${t}/scgi;\n` +
    `  gzip on;\n  include ${t}/folio.conf;\n}\n`);
  const errorLog = path.join(tmp, 'error.log');
  const proc = spawn(NGINX, ['-p', tmp + '/', '-c', path.join(tmp, 'nginx.conf'), '-e', errorLog,
    '-g', `daemon off; pid ${tmp}/nginx.pid; error_log ${errorLog};`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  let exited = null;
  const exitPromise = new Promise((r) => proc.on('exit', (code, sig) => { exited = { code, sig }; r(exited); }));
  const errors = () => { try { return fs.readFileSync(errorLog, 'utf8').slice(-3000); } catch { return ''; } };
  async function stop() {
    if (!exited) {
      proc.kill('SIGTERM');
      const r = await Promise.race([exitPromise, sleep(10000).then(() => 'timeout')]);
      if (r === 'timeout') { proc.kill('SIGKILL'); await exitPromise; }
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const t0 = Date.now();
  for (;;) {
    if (exited) { await stop(); throw new Error(`nginx exited: ${stderr}\n${errors()}`); }
    if ((await listening(ports[0])) && (await listening(ports[1]))) break;
    if (Date.now() - t0 > 10000) { await stop(); throw new Error(`nginx did not listen within 10 s\n${errors()}`); }
    await sleep(50);
  }
  return { rootPort: ports[0], prefixPort: ports[1], proc, stop, errors, exited: () => exited };
}

// ---- the run ------------------------------------------------------------------------------

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-proxy-article-'));
for (const dir of ['www', 'fragments', 'assets']) {
  fs.cpSync(path.join(SOURCE_ROOT, dir), path.join(root, dir), { recursive: true });
}
const file = (rel) => path.join(root, rel);

let folio = null;
let nginx = null;
let browser = null;
async function cleanup() {
  try { if (browser) await browser.close(); } catch { /* already gone */ }
  try { if (nginx) await nginx.stop(); } catch (e) { console.log(`nginx stop: ${e.message}`); }
  try { if (folio) await folio.stop(); } catch (e) { console.log(`folio stop: ${e.message}`); }
  fs.rmSync(root, { recursive: true, force: true });
}
// Whatever happens below, no server outlives us.
process.on('exit', () => {
  if (nginx && !nginx.exited()) nginx.proc.kill('SIGKILL');
  if (folio && !folio.exited()) folio.proc.kill('SIGKILL');
});
// meson's timeout sends SIGTERM, which skips 'exit' handlers: stop the servers first.
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, async () => { console.log(`FAIL interrupted by ${sig}`); await cleanup(); process.exit(1); });
}
const watchdog = setTimeout(async () => {
  console.log(`FAIL watchdog: gave up after ${TOTAL_MS / 1000} s`);
  await cleanup();
  process.exit(1);
}, TOTAL_MS);
watchdog.unref();

try {
  folio = await startFolio({ root, args: ['--trust-proxy'] });
  nginx = await startNginx(folio.port);
  const base = `http://127.0.0.1:${nginx.prefixPort}${PREFIX}/`;
  browser = await launchBrowser();
  const context = await browser.newContext();
  const pg = await context.newPage();

  const consoleErrors = [];
  pg.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`${m.text()} (${m.location().url || 'no url'})`); });
  pg.on('pageerror', (e) => consoleErrors.push(`[pageerror] ${e.message}`));
  const bad = [];          // responses >= 400 and requests that failed outright
  const outside = [];      // requests to this origin outside the prefix
  const seen = [];
  pg.on('response', (r) => {
    seen.push(r.url());
    if (r.status() >= 400) bad.push(`${r.status()} ${r.url()}`);
  });
  pg.on('requestfailed', (r) => {
    const why = r.failure()?.errorText || '';
    // The event stream is cut when the page navigates or closes: not a failure.
    if (r.url().endsWith('/__folio/events') && /ERR_ABORTED/.test(why)) return;
    bad.push(`failed ${r.url()} ${why}`);
  });
  pg.on('request', (r) => {
    const u = new URL(r.url());
    if (u.host === `127.0.0.1:${nginx.prefixPort}` && !u.pathname.startsWith(PREFIX + '/')) outside.push(r.url());
  });
  let loads = 0;
  pg.on('load', () => { loads++; });

  // 1. The page, its fragments, its assets: all through nginx under the prefix.
  await pg.goto(base, { waitUntil: 'load', timeout: LOAD_MS });
  let settled = true;
  try {
    await pg.waitForFunction(() => {
      const els = [...document.querySelectorAll('[id^="fragment-"]')];
      return els.length > 0 && els.every((e) => ['loaded', 'error'].includes(e.getAttribute('data-fragment-state')));
    }, null, { timeout: LOAD_MS, polling: 50 });
  } catch { settled = false; }
  check(settled, 'every fragment element settles within 15 s');
  const frags = await pg.$$eval('[id^="fragment-"]', (els) => els.map((e) => ({
    id: e.id, state: e.getAttribute('data-fragment-state'), children: e.children.length,
    loading: !!e.querySelector('.fragment-loading'),
  })));
  check(frags.length >= 4, 'the article has 4+ fragment elements', `found ${frags.length}`);
  const empty = frags.filter((f) => f.state !== 'loaded' || f.children === 0 || f.loading);
  check(empty.length === 0, 'every fragment element is filled', JSON.stringify(empty));
  // Lazy images: scroll through the page so every <img> is requested, then wait for them.
  await pg.evaluate(async () => {
    for (const img of document.images) img.loading = 'eager';
    window.scrollTo(0, document.body.scrollHeight);
  });
  await pg.waitForFunction(() => [...document.images].every((i) => i.complete), null, { timeout: STEP_MS }).catch(() => {});
  const broken = await pg.$$eval('img', (imgs) => imgs.filter((i) => i.complete && i.naturalWidth === 0).map((i) => i.currentSrc || i.src));
  check(broken.length === 0, 'every <img> decoded', broken.join(', '));
  await pg.evaluate(() => window.scrollTo(0, 0));
  check(bad.length === 0, 'no request failed and no response was >= 400', bad.join('\n     '));
  check(outside.length === 0, `no request left ${PREFIX}/`, outside.join('\n     '));
  check(seen.some((u) => u.endsWith(`${PREFIX}/__folio/reload.js`)), 'the live-reload client came from under the prefix');
  check(seen.some((u) => new URL(u).pathname === `${PREFIX}/__folio/early.js`), 'its first part came from under the prefix');

  // The live-reload client is connected through nginx: its stream said hello, folio counts it.
  let connected = true;
  try {
    await pg.waitForFunction(() => !!window.__folioReload, null, { timeout: STEP_MS });
    const t0 = Date.now();
    for (;;) {
      const h = await (await fetch(`${base}__folio/health`)).json();
      if (h.event_stream_connections >= 1) break;
      if (Date.now() - t0 > STEP_MS) throw new Error(`streams: ${h.event_stream_connections}`);
      await sleep(20);
    }
  } catch (e) { connected = false; console.log(`     ${e.message}`); }
  check(connected, 'the page opened its event stream through nginx');
  await pg.evaluate(() => { window.__marker = 'still here'; });
  const loadsBefore = loads;
  const notNavigated = async () => loads === loadsBefore && await pg.evaluate(() =>
    window.__marker === 'still here' && performance.getEntriesByType('navigation').length === 1);

  // 2. A stylesheet edit: the computed style changes, the page stays.
  const cssBefore = await pg.evaluate(() => getComputedStyle(document.querySelector('h1')).color);
  const t1 = Date.now();
  fs.appendFileSync(file('www/style.css'), '\nh1 { color: rgb(1, 2, 3) !important; }\n');
  let swapped = true;
  try {
    await pg.waitForFunction(() => getComputedStyle(document.querySelector('h1')).color === 'rgb(1, 2, 3)',
      null, { timeout: STEP_MS, polling: 10 });
  } catch { swapped = false; }
  check(swapped, `editing www/style.css restyles the page through nginx within ${STEP_MS} ms`,
    `h1 color stayed ${cssBefore}`);
  if (swapped) console.log(`     style applied ${Date.now() - t1} ms after the save`);
  check(await notNavigated(), 'the stylesheet swap did not navigate');

  // 3. A fragment edit: that fragment is re-injected, the page stays.
  const name = frags.map((f) => f.id.slice('fragment-'.length)).find((n) => fs.existsSync(file(`fragments/${n}.html`)));
  const t2 = Date.now();
  fs.appendFileSync(file(`fragments/${name}.html`), '\n<p id="proxy-probe">re-injected through nginx</p>\n');
  let injected = true;
  try {
    await pg.waitForFunction((n) => !!document.querySelector(`#fragment-${n} #proxy-probe`) &&
      document.getElementById(`fragment-${n}`).getAttribute('data-fragment-state') === 'loaded',
    name, { timeout: STEP_MS, polling: 10 });
  } catch { injected = false; }
  check(injected, `editing fragments/${name}.html re-injects it through nginx within ${STEP_MS} ms`);
  if (injected) console.log(`     fragment re-injected ${Date.now() - t2} ms after the save`);
  check(await notNavigated(), 'the fragment re-injection did not navigate');

  check(bad.length === 0, 'still no failed request after the reloads', bad.join('\n     '));
  check(consoleErrors.length === 0, 'no console errors', consoleErrors.join('\n     '));
} catch (e) {
  checks.fail(e.message);
  console.log(`FAIL ${e.stack || e.message}`);
  if (nginx) console.log(nginx.errors());
  if (folio) console.log(folio.log.slice(-20).join('\n'));
} finally {
  await cleanup();
  clearTimeout(watchdog);
}
process.exitCode = checks.finish('browser-proxy: ');
