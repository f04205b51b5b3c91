// What a reader waits for: time to DOMContentLoaded and to the last fragment filled, and the
// bytes, in a real Chromium (Debian's) with its own network emulation, for folio and for nginx
// with gzip_static, with and without the fragments' preload Link headers written by hand.
// Medians over interleaved runs. A benchmark, not a test: it prints tables and asserts nothing.
//
//   node bench/preload.mjs                         # both articles, both links, 7 rounds
//   node bench/preload.mjs --article real --rounds 3 --links 100/10
//   node bench/preload.mjs --folio main=build/src/folio --folio "off=build/src/folio --preload-fragments no"
//   node bench/preload.mjs --servers folio,nginx-hints  # a subset (names as in the table)
//   node bench/preload.mjs --repeat                # also a second visit in the same profile
//   node bench/preload.mjs --waterfall             # each load's fragments: asked, first byte, done, filled
//
// Articles: "real", the real-shaped one of bench/preload-fixture.mjs (308 KB page, 15
// fragments of 4 MB raw filled one after another, 100 images), generated in a temporary
// folder; "repo", this repository's www/, fragments/, assets/ (6 fragments, fetched together).
// Links: Chromium's Network.emulateNetworkConditions per page (latency added to every request,
// download and upload throughput shared by all of the page's requests), "LATENCY/MBITS".
// Servers, all on 127.0.0.1 with free ports, access logs off: folio --production (each --folio
// NAME=CMD, default build/src/folio) on the plain tree, after its background brotli 11 has
// landed; nginx 1.22 (worker_processes 1, gzip_static over a copy with gzip -9 .gz beside
// every compressible file of 512 bytes or more, as article.py's); nginx-hints, the same with
// one `add_header Link` per fragment the page names, in document order, folio's spelling;
// nginx-hints-low, the same with fetchpriority=low; nginx-hints-own-first, the page's
// stylesheet and script preloaded before the fragments; nginx-same, the Link headers the first
// folio sends, copied as they are; nginx-same-high, those without fetchpriority=low (folio's
// before it had it);
// nginx-same-first4, those but for the fragments' after the first four;
// nginx-same-images, those and one per image inside a fragment;
// lighttpd and lighttpd-same (mod_deflate: br 11 like folio, compressed once to disk).
// Each run: a fresh browser context (empty cache), CDP network emulation, navigate, wait for
// every fragment filled ("folio:fragment" events, which both articles' loaders send) and the
// load event, then 3.5 s more: Chromium says "preloaded but not used" 3 s after load.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { launchBrowser } from '../tests/lib/browser.mjs';
import { startFolio } from '../tests/lib/folio.mjs';
import { writeRealShaped } from './preload-fixture.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.dirname(here);
const argv = process.argv.slice(2);
const opt = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : dflt; };
const opts = (name) => argv.flatMap((a, i) => (a === name ? [argv[i + 1]] : []));
const ROUNDS = Number(opt('--rounds', 7));
const ARTICLES = opt('--article', 'real,repo').split(',');
const LINKS = opt('--links', '40/20,100/10').split(',').map((l) => {
  const [latency, mbits] = l.split('/').map(Number);
  return { name: `${latency} ms, ${mbits} Mbit/s`, latency, bps: (mbits * 1e6) / 8 };
});
const ONLY = opt('--servers', null)?.split(',');
const REPEAT = argv.includes('--repeat');
const WATERFALL = argv.includes('--waterfall');
const DEFAULT_SERVERS = ['nginx', 'nginx-hints', 'nginx-same'];
const SETTLE_MS = 3500;
const STALL_MS = 60e3; // a load not done by then is counted as stalled, not timed
// A load that finished but paused this long (Chromium's emulated link sometimes holds every open
// request for ~39.5 s, with any server) is counted as stalled too: a median must not time it.
const PAUSE_MS = 20e3;
const log = (m) => process.stderr.write(m + '\n');

// ---- trees -------------------------------------------------------------------------------------
const COMPRESSIBLE = new Set(['.html', '.css', '.js', '.svg', '.json', '.mjs', '.txt', '.csv', '.bib', '.xml']);

function walk(dir, rel = '') {
  return fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const r = path.join(rel, e.name);
    return e.isDirectory() ? walk(dir, r) : e.isFile() ? [r] : [];
  });
}

/* A copy of the article's three folders with a gzip -9 .gz beside every compressible file of
 * 512 bytes or more, same mtime: nginx's gzip_static serves those. */
function staticCopy(root, dest) {
  for (const folder of ['www', 'fragments', 'assets']) {
    if (!fs.existsSync(path.join(root, folder))) continue;
    for (const rel of walk(path.join(root, folder))) {
      const from = path.join(root, folder, rel), to = path.join(dest, folder, rel);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(from, to);
      const st = fs.statSync(from);
      fs.utimesSync(to, st.atime, st.mtime);
      if (COMPRESSIBLE.has(path.extname(rel)) && st.size >= 512) {
        fs.writeFileSync(to + '.gz', zlib.gzipSync(fs.readFileSync(from), { level: 9 }));
        fs.utimesSync(to + '.gz', st.atime, st.mtime);
      }
    }
  }
}

/* The fragment names a page asks for, in document order: ids "fragment-<name>" outside
 * comments whose fragments/<name>.html exists (what folio hints). */
function hintedFragments(root) {
  const html = fs.readFileSync(path.join(root, 'www/index.html'), 'utf8').replace(/<!--[\s\S]*?-->/g, '');
  const names = [...html.matchAll(/\sid\s*=\s*["']?fragment-([^"'\s>]+)/g)].map((m) => m[1]);
  return [...new Set(names)].filter((n) => fs.existsSync(path.join(root, 'fragments', n + '.html')));
}

/* The URL paths of the images inside fragments (their references resolve against the page). */
function fragmentImages(root) {
  return walk(path.join(root, 'fragments')).flatMap((rel) => {
    const html = fs.readFileSync(path.join(root, 'fragments', rel), 'utf8');
    return [...html.matchAll(/<img\s[^>]*?src="([^"]+)"/g)].map((m) => new URL(m[1], 'http://x/').pathname);
  });
}

// ---- servers -----------------------------------------------------------------------------------
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

async function waitListening(port, proc, ms = 10000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}`);
    const ok = await new Promise((r) => {
      const c = net.connect(port, '127.0.0.1', () => { c.destroy(); r(true); });
      c.on('error', () => r(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('did not listen');
}

async function startNginx(name, root, tmp, links) {
  const d = fs.mkdtempSync(path.join(tmp, name + '-'));
  fs.mkdirSync(path.join(d, 'logs'));
  const port = await freePort();
  const headers = links.map((l) => `            add_header Link "${l}";`).join('\n');
  const conf = `
${process.getuid() === 0 ? 'user root;' : ''}
worker_processes 1;
daemon off;
master_process on;
pid ${d}/nginx.pid;
error_log ${d}/logs/error.log warn;
events { worker_connections 1024; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    charset utf-8;
    charset_types text/css application/javascript image/svg+xml;
    access_log off;
    sendfile on;
    tcp_nopush on;
    gzip off;
    gzip_static on;
    gzip_vary on;
    client_body_temp_path ${d}/body;
    proxy_temp_path ${d}/proxy;
    fastcgi_temp_path ${d}/fastcgi;
    uwsgi_temp_path ${d}/uwsgi;
    scgi_temp_path ${d}/scgi;
    server {
        listen 127.0.0.1:${port};
        root ${root}/www;
        index index.html;
        location = /index.html {
${headers}
        }
        location /fragments/ { alias ${root}/fragments/; }
        location /assets/ { alias ${root}/assets/; }
    }
}
`;
  fs.writeFileSync(path.join(d, 'nginx.conf'), conf);
  const proc = spawn('nginx', ['-p', d, '-c', path.join(d, 'nginx.conf')], { stdio: 'ignore', detached: true });
  await waitListening(port, proc);
  return { name, url: `http://127.0.0.1:${port}/`, stop: async () => stopGroup(proc) };
}

/* lighttpd 1.4 (one process) with mod_deflate: br 11 (window 24, as folio's), gzip 9, zstd 19,
 * compressed once into its cache folder; links on the page as one comma-joined Link header. */
async function startLighttpd(name, root, tmp, links) {
  const d = fs.mkdtempSync(path.join(tmp, name + '-'));
  fs.mkdirSync(path.join(d, 'deflate-cache'));
  const port = await freePort();
  const q = JSON.stringify;
  const types = ['text/html', 'text/css', 'text/javascript', 'application/javascript', 'image/svg+xml',
    'application/json'];
  const conf = `
server.modules = ("mod_alias", "mod_deflate", "mod_setenv")
server.bind = "127.0.0.1"
server.port = ${port}
server.document-root = ${q(root + '/www')}
server.pid-file = ${q(d + '/lighttpd.pid')}
server.errorlog = ${q(d + '/error.log')}
server.network-backend = "sendfile"
index-file.names = ("index.html")
alias.url = ("/fragments/" => ${q(root + '/fragments/')}, "/assets/" => ${q(root + '/assets/')})
include_shell "/usr/share/lighttpd/create-mime.conf.pl"
deflate.mimetypes = (${types.map(q).join(', ')})
deflate.allowed-encodings = ("br", "zstd", "gzip")
deflate.compression-level = 9
deflate.params = ("BROTLI_PARAM_QUALITY" => 11, "BROTLI_PARAM_LGWIN" => 24, "ZSTD_c_compressionLevel" => 19)
deflate.min-compress-size = 512
deflate.cache-dir = ${q(d + '/deflate-cache')}
${links.length ? `$HTTP["url"] =~ "^/(index\\.html)?$" { setenv.add-response-header = ("Link" => ${q(links.join(', '))}) }` : ''}
`;
  fs.writeFileSync(path.join(d, 'lighttpd.conf'), conf);
  const proc = spawn('lighttpd', ['-D', '-f', path.join(d, 'lighttpd.conf')], { stdio: 'ignore', detached: true });
  await waitListening(port, proc);
  return { name, url: `http://127.0.0.1:${port}/`, stop: async () => stopGroup(proc) };
}

async function stopGroup(proc) {
  if (proc.exitCode !== null) return;
  const done = new Promise((r) => proc.on('exit', r));
  process.kill(-proc.pid, 'SIGTERM');
  await done;
}

/* Waits until folio answers the big bodies with its best brotli (ETag "-br11"), made by its
 * background thread: what a server that has been up a while sends. */
async function folioWarm(url, paths) {
  const end = Date.now() + 180e3;
  for (const p of paths) {
    for (;;) {
      const res = await fetch(url + p, { headers: { 'accept-encoding': 'br' } });
      await res.arrayBuffer();
      const etag = res.headers.get('etag') || '';
      if (res.headers.get('content-encoding') !== 'br' || etag.includes('-br11')) break;
      if (Date.now() > end) throw new Error(`folio: no brotli 11 of ${p} after 3 minutes (${etag})`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function startServers(root, staticRoot, tmp) {
  const names = hintedFragments(root);
  const link = (n, extra = '') => `<fragments/${n}.html>; rel=preload; as=fetch; crossorigin=anonymous${extra}`;
  const folios = opts('--folio').length ? opts('--folio') : [`folio=${path.join(repo, 'build/src/folio')}`];
  const wanted = (n, byDefault) => (ONLY ? ONLY.includes(n) : byDefault);
  const servers = [];
  for (const spec of folios) {
    const [name, cmd] = spec.includes('=') ? [spec.slice(0, spec.indexOf('=')), spec.slice(spec.indexOf('=') + 1)] : ['folio', spec];
    if (!wanted(name, true)) continue;
    const [bin, ...args] = cmd.split(/\s+/);
    const f = await startFolio({ root, bin, args: ['--production', '--quiet', ...args] });
    await folioWarm(f.url, ['', ...names.map((n) => `fragments/${n}.html`)]);
    servers.push({ name, url: f.url, stop: () => f.stop() });
  }
  const own = ['<style.css>; rel=preload; as=style', '<article.js>; rel=preload; as=script'];
  // nginx-same: the Link headers the first folio sends, as they are.
  const same = servers.length ? (await fetch(servers[0].url)).headers.get('link') : null;
  const peers = [['nginx', []], ['nginx-hints', names.map((n) => link(n))],
    ['nginx-hints-low', names.map((n) => link(n, '; fetchpriority=low'))],
    ['nginx-hints-own-first', [...own, ...names.map((n) => link(n))]],
    ['nginx-same', same ? same.split(', ') : []],
    ['nginx-same-high', (same ? same.split(', ') : []).map((l) => l.replace('; fetchpriority=low', ''))],
    ['nginx-same-first4', (same ? same.split(', ') : []).filter((l, i, all) => !l.includes('as=fetch') ||
      all.slice(0, i).filter((x) => x.includes('as=fetch')).length < 4)],
    ['nginx-same-images', [...(same ? same.split(', ') : []),
      ...fragmentImages(root).map((p) => `<${p.slice(1)}>; rel=preload; as=image`)]]];
  for (const [name, links] of peers) {
    if (wanted(name, DEFAULT_SERVERS.includes(name))) servers.push(await startNginx(name, staticRoot, tmp, links));
  }
  for (const [name, links] of [['lighttpd', []], ['lighttpd-same', same ? same.split(', ') : []]]) {
    if (wanted(name, false)) servers.push(await startLighttpd(name, root, tmp, links));
  }
  return { servers, names };
}

// ---- one page load -----------------------------------------------------------------------------
// In the page, before its scripts: the time of every fragment filled, relative to navigation.
const PROBE = () => {
  window.__filled = [];
  document.addEventListener('folio:fragment', (e) => window.__filled.push([e.detail.name, performance.now()]));
  window.__busy = []; // the main thread's long tasks (over 50 ms): [start, duration]
  new PerformanceObserver((l) => l.getEntries().forEach((e) => window.__busy.push([e.startTime, e.duration])))
    .observe({ type: 'longtask', buffered: true });
};

/* In the page: each fragment's request as resource timing saw it and when it was filled, the
 * long tasks, in ms from navigation; one line per fragment for --waterfall. */
const WATERFALL_OF = () => {
  const nav = performance.getEntriesByType('navigation')[0];
  const res = performance.getEntriesByType('resource');
  const filled = new Map(window.__filled);
  const r = (x) => Math.round(x);
  const frags = res.filter((e) => e.name.includes('/fragments/')).map((e) => {
    const name = e.name.replace(/.*\/fragments\/(.*)\.html$/, '$1');
    return `    ${name.padEnd(12)} asked ${r(e.startTime)} first byte ${r(e.responseStart)} done ${r(e.responseEnd)} ` +
      `${e.encodedBodySize} B filled ${r(filled.get(name) ?? NaN)}`;
  });
  const after = (t) => r(window.__busy.filter(([s]) => s >= t).reduce((a, [, d]) => a + d, 0));
  const images = res.filter((e) => e.initiatorType === 'img');
  return [`    page first byte ${r(nav.responseStart)} done ${r(nav.responseEnd)} DCL ${r(nav.domContentLoadedEventStart)}; ` +
    `long tasks after DCL ${after(nav.domContentLoadedEventStart)} ms; images ${images.length}, ` +
    `last done ${r(Math.max(0, ...images.map((e) => e.responseEnd)))}`, ...frags].join('\n');
};

async function visit(page, cdp, url, article, record) {
  const requests = new Map(); // requestId -> {url, type, initiator}
  let bytes = 0;
  const onSent = (p) => { if (!requests.has(p.requestId)) requests.set(p.requestId, { url: p.request.url, initiator: p.initiator.type, t0: p.timestamp }); };
  const onDone = (p) => { bytes += p.encodedDataLength; const r = requests.get(p.requestId); if (r) r.t1 = p.timestamp; };
  const onResp = (p) => {
    const r = requests.get(p.requestId);
    if (r) r.tr = p.timestamp;
    if (r && (p.response.fromDiskCache || p.response.fromPrefetchCache)) r.cached = true;
  };
  cdp.on('Network.responseReceived', onResp);
  const dump = (why) => {
    const t0 = Math.min(...[...requests.values()].map((r) => r.t0));
    log(`  ${why} (${url}): ` + [...requests.values()].filter((r) => !r.t1).map((r) => `\n    ${r.url} sent ${(r.t0 - t0).toFixed(2)} response ${r.tr ? (r.tr - t0).toFixed(2) : 'none'}`).join(''));
  };
  const onCached = (p) => { const r = requests.get(p.requestId); if (r) r.cached = true; };
  cdp.on('Network.requestWillBeSent', onSent);
  cdp.on('Network.loadingFinished', onDone);
  cdp.on('Network.requestServedFromCache', onCached);
  const warnings = [];
  const onConsole = (m) => { if (/preload/i.test(m.text())) warnings.push(m.text()); };
  page.on('console', onConsole);
  try {
    try {
      await page.goto(url, { waitUntil: 'load', timeout: STALL_MS });
      await page.waitForFunction((n) => window.__filled.length >= n, article.expected, { timeout: STALL_MS, polling: 50 });
    } catch (e) {
      dump(`stalled: ${e.message.split('\n')[0]}; requests not finished`);
      record({ stalled: true });
      return;
    }
    await page.waitForTimeout(SETTLE_MS);
    const m = await page.evaluate((images) => {
      const nav = performance.getEntriesByType('navigation')[0];
      const res = performance.getEntriesByType('resource');
      const end = (suffix) => Math.max(0, ...res.filter((e) => e.name.endsWith(suffix)).map((e) => e.responseEnd));
      return {
        dcl: nav.domContentLoadedEventStart, load: nav.loadEventStart,
        last: Math.max(...window.__filled.map((f) => f[1])),
        errors: window.__filled.filter((f) => document.getElementById('fragment-' + f[0])?.textContent === '').length,
        css: end('style.css'), js: end('article.js'),
        fromLink: res.filter((e) => e.initiatorType === 'link' && e.name.includes('/fragments/')).length,
        images: Math.max(0, ...res.filter((e) => images.includes(new URL(e.name).pathname)).map((e) => e.responseEnd)),
      };
    }, article.images);
    if (WATERFALL) log(`  ${url}\n` + await page.evaluate(WATERFALL_OF));
    const perFragment = new Map();
    for (const r of requests.values()) {
      if (r.url.includes('/fragments/')) perFragment.set(r.url, (perFragment.get(r.url) || 0) + 1);
    }
    if (m.last > PAUSE_MS || m.load > PAUSE_MS) {
      dump(`paused: last fragment at ${sec(m.last)} s, load at ${sec(m.load)} s`);
      record({ stalled: true });
      return;
    }
    record({ ...m, bytes, requests: [...requests.values()].filter((r) => !r.cached).length, warnings: warnings.length,
      twice: [...perFragment.values()].filter((n) => n > 1).length });
  } finally {
    cdp.off('Network.requestWillBeSent', onSent);
    cdp.off('Network.loadingFinished', onDone);
    cdp.off('Network.requestServedFromCache', onCached);
    cdp.off('Network.responseReceived', onResp);
    page.off('console', onConsole);
  }
}

async function run(browser, server, lnk, article) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await ctx.newPage();
    await page.addInitScript(PROBE);
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false, latency: lnk.latency, downloadThroughput: lnk.bps, uploadThroughput: lnk.bps,
    });
    const out = {};
    await visit(page, cdp, server.url, article, (m) => { out.first = m; });
    if (REPEAT) await visit(page, cdp, server.url, article, (m) => { out.repeat = m; });
    return out;
  } finally {
    await ctx.close();
  }
}

// ---- report ------------------------------------------------------------------------------------
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n ? (n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : NaN; };
const sec = (ms) => (ms / 1000).toFixed(2);

function table(title, servers, results, key) {
  const rows = [`\n### ${title}\n`,
    '| link | server | DOMContentLoaded | last fragment filled | load | style.css / article.js done | images in fragments done | KB on the wire | requests sent | fragments from a preload | fetched twice | "preloaded but not used" | stalled |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'];
  for (const lnk of LINKS) {
    for (const s of servers) {
      const all = results.get(`${lnk.name}|${s.name}`).map((r) => r[key]).filter(Boolean);
      const rs = all.filter((r) => !r.stalled);
      const med = (f) => median(rs.map(f));
      rows.push(`| ${lnk.name} | ${s.name} | ${sec(med((r) => r.dcl))} s | ${sec(med((r) => r.last))} s | ` +
        `${sec(med((r) => r.load))} s | ${sec(med((r) => r.css))} / ${sec(med((r) => r.js))} s | ` +
        `${sec(med((r) => r.images))} s | ` +
        `${Math.round(med((r) => r.bytes) / 1000)} | ${med((r) => r.requests)} | ${med((r) => r.fromLink)} | ` +
        `${Math.max(...rs.map((r) => r.twice))} | ${Math.max(...rs.map((r) => r.warnings))} | ` +
        `${all.length - rs.length} |`);
    }
  }
  const m = (lnk, name, f) => median(results.get(`${lnk.name}|${name}`).map((r) => r[key])
    .filter((r) => r && !r.stalled).map(f));
  const has = (name) => servers.some((x) => x.name === name);
  for (const s of servers.filter((x) => x.name.startsWith('folio'))) {
    for (const lnk of LINKS) {
      const vs = (ref, f) => (has(ref) ? `${(m(lnk, s.name, f) / m(lnk, ref, f)).toFixed(2)} of ${ref}'s` : null);
      const parts = [vs('nginx-same', (r) => r.last), vs('nginx-hints', (r) => r.last)].filter(Boolean);
      const dcl = has('folio-off') && s.name !== 'folio-off' ? `; DOMContentLoaded ${vs('folio-off', (r) => r.dcl)}` : '';
      if (parts.length) rows.push(`\n${s.name} at ${lnk.name}: last fragment filled ${parts.join(', ')}${dcl}`);
    }
  }
  return rows.join('\n');
}

async function benchArticle(which, browser, tmp) {
  let root;
  if (which === 'real') {
    root = path.join(tmp, 'real');
    writeRealShaped(root);
  } else {
    root = repo;
  }
  const staticRoot = path.join(tmp, which + '-static');
  staticCopy(root, staticRoot);
  const { servers, names } = await startServers(root, staticRoot, tmp);
  const article = { expected: names.length, images: fragmentImages(root) };
  const results = new Map();
  try {
    log(`${which}: ${article.expected} fragments, ${article.images.length} images in them; warm-up`);
    for (const s of servers) await run(browser, s, LINKS[0], article); // first requests, untimed
    for (let round = 0; round < ROUNDS; round++) {
      for (const lnk of LINKS) {
        const order = servers.map((_, i) => servers[(i + round) % servers.length]);
        for (const s of order) {
          const r = await run(browser, s, lnk, article);
          const key = `${lnk.name}|${s.name}`;
          results.set(key, [...(results.get(key) || []), r]);
          log(`  round ${round + 1} ${lnk.name} ${s.name}: ` + (r.first.stalled ? 'stalled' : `DCL ${sec(r.first.dcl)} ` +
            `last ${sec(r.first.last)} ${Math.round(r.first.bytes / 1000)} KB twice ${r.first.twice} warn ${r.first.warnings}`));
        }
      }
    }
  } finally {
    for (const s of servers) await s.stop();
  }
  const label = which === 'real' ? 'real-shaped article (308 KB page, 15 fragments of 4 MB raw filled in turn, 100 images)'
    : "this repository's article (6 fragments fetched together)";
  let out = table(`${label}: first visit`, servers, results, 'first');
  if (REPEAT) out += '\n' + table(`${label}: second visit, same profile`, servers, results, 'repeat');
  return out;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-preload-'));
const browser = await launchBrowser();
try {
  const nginx = spawnSync('nginx', ['-v'], { encoding: 'utf8' }).stderr.trim();
  const head = [`Chromium ${browser.version()}, ${nginx}`,
    `${ROUNDS} rounds, medians; load average at the start ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`];
  const parts = [];
  for (const a of ARTICLES) parts.push(await benchArticle(a, browser, tmp));
  console.log(head.join('\n') + '\n' + parts.join('\n') + `\nload average at the end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
} finally {
  await browser.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
