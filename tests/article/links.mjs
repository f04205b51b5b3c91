// Link checker: crawl the article as folio serves it and check that every internal
// reference resolves with 200 and a sensible Content-Type, and that every in-page #anchor
// exists in the page or one of its fragments.
//
// What is crawled: www/index.html and www/404.html; every fragments/<name>.html named by an
// element id="fragment-<name>" (its URLs resolve against the *page*, because the loader
// injects it there); stylesheets (url(...) and @import); iframe pages (as documents of their
// own, including string literals passed to fetch() in their inline scripts).
import { startFolio } from '../lib/folio.mjs';
import { SOURCE_ROOT, tally, watchdog, decodeEntities } from './common.mjs';

const t = tally('article-links');
const folio = await startFolio({ root: SOURCE_ROOT });
watchdog(100000, () => folio.stop());
const origin = new URL(folio.url).origin;

const EXPECTED_TYPES = {
  '.html': /^text\/html/, '.css': /^text\/css/, '.js': /^(text|application)\/javascript/,
  '.svg': /^image\/svg\+xml/, '.png': /^image\/png/, '.jpg': /^image\/jpeg/, '.webp': /^image\/webp/,
  '.json': /^application\/json/, '.csv': /^text\/(csv|plain)/, '.ogg': /^(audio|application)\/ogg/,
};

const fetched = new Map();   // url (no hash) -> {status, type, body}
async function get(url) {
  const key = url.split('#')[0];
  if (!fetched.has(key)) {
    fetched.set(key, (async () => {
      try {
        const res = await fetch(key, { redirect: 'manual' });
        const buf = Buffer.from(await res.arrayBuffer());
        return { status: res.status, type: res.headers.get('content-type') || '', body: buf };
      } catch (e) {
        return { status: 0, type: '', body: Buffer.alloc(0), error: e.message };
      }
    })());
  }
  return fetched.get(key);
}

function refsInHtml(html) {
  const out = [];
  const noComments = html.replace(/<!--[\s\S]*?-->/g, '');
  const attr = /\s(href|src|srcset|poster|data|action)\s*=\s*("([^"]*)"|'([^']*)')/gi;
  for (const m of noComments.matchAll(attr)) {
    const v = decodeEntities(m[3] ?? m[4] ?? '');
    if (m[1].toLowerCase() === 'srcset') {
      for (const part of v.split(',')) { const u = part.trim().split(/\s+/)[0]; if (u) out.push(u); }
    } else out.push(v);
  }
  for (const m of noComments.matchAll(/style\s*=\s*"([^"]*)"/gi)) out.push(...refsInCss(decodeEntities(m[1])));
  for (const m of noComments.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/gi)) out.push(...refsInCss(m[1]));
  return out;
}
function refsInCss(css) {
  const out = [];
  for (const m of css.matchAll(/url\(\s*(['"]?)([^'")]+)\1\s*\)/g)) out.push(m[2]);
  for (const m of css.matchAll(/@import\s+(['"])([^'"]+)\1/g)) out.push(m[2]);
  return out;
}
function fetchLiterals(html) {
  return [...html.matchAll(/fetch\(\s*(['"])([^'"]+)\1/g)].map((m) => m[2]);
}
function idsIn(html) {
  return new Set([...html.matchAll(/\sid\s*=\s*("([^"]*)"|'([^']*)')/gi)].map((m) => decodeEntities(m[2] ?? m[3])));
}
function isInternal(u) {
  return u.origin === origin;
}
function skip(raw) {
  return !raw || /^(mailto:|tel:|javascript:|data:|blob:|about:)/i.test(raw) ||
    (/^[a-z][a-z0-9+.-]*:/i.test(raw) && !/^https?:/i.test(raw));
}

const checkedUrls = new Set();
async function checkUrl(url, from) {
  const key = url.href.split('#')[0];
  if (checkedUrls.has(key)) return;
  checkedUrls.add(key);
  const r = await get(key);
  const shown = key.slice(origin.length);
  if (!t.ok(r.status === 200, `GET ${shown} (from ${from})`, r.error || `HTTP ${r.status}`)) return;
  t.ok(r.body.length > 0, `GET ${shown} has a body`);
  const ext = (url.pathname.match(/\.[a-z0-9]+$/i) || [''])[0].toLowerCase();
  if (EXPECTED_TYPES[ext]) t.ok(EXPECTED_TYPES[ext].test(r.type), `Content-Type of ${shown}`, `got "${r.type}"`);
}

// Each document: its own text, plus the fragments injected into it.
async function crawlDocument(docUrl, seen) {
  if (seen.has(docUrl.href)) return;
  seen.add(docUrl.href);
  const r = await get(docUrl.href);
  const shown = docUrl.pathname;
  if (!t.ok(r.status === 200, `document ${shown}`, `HTTP ${r.status}`)) return;
  const html = r.body.toString('utf8');
  const parts = [{ html, from: shown }];

  const fragNames = [...html.matchAll(/\sid\s*=\s*"fragment-([^"]+)"/g)].map((m) => m[1]);
  for (const name of fragNames) {
    const fu = new URL(`fragments/${name}.html`, docUrl);
    await checkUrl(fu, `${shown} #fragment-${name}`);
    const fr = await get(fu.href);
    if (fr.status === 200) parts.push({ html: fr.body.toString('utf8'), from: `fragments/${name}.html` });
  }
  const ids = new Set();
  for (const p of parts) for (const id of idsIn(p.html)) ids.add(id);

  const anchors = [];
  for (const p of parts) {
    for (const raw of [...refsInHtml(p.html), ...fetchLiterals(p.html)]) {
      if (skip(raw)) continue;
      const u = new URL(raw, docUrl);
      if (!isInternal(u)) continue;
      const samePage = u.href.split('#')[0] === docUrl.href.split('#')[0];
      if (u.hash && (samePage || raw.startsWith('#'))) { anchors.push({ id: decodeURIComponent(u.hash.slice(1)), from: p.from }); continue; }
      await checkUrl(u, p.from);
      const ext = (u.pathname.match(/\.[a-z0-9]+$/i) || [''])[0].toLowerCase();
      if (ext === '.css') {
        const css = await get(u.href);
        if (css.status === 200) {
          for (const cr of refsInCss(css.body.toString('utf8'))) {
            if (skip(cr)) continue;
            const cu = new URL(cr, u);
            if (isInternal(cu)) await checkUrl(cu, u.pathname);
          }
        }
      }
      if (ext === '.html' && /<iframe[^>]+src\s*=\s*["']?[^"'>]*/i.test(p.html) && p.html.includes(raw)) {
        const isFrame = new RegExp(`<iframe[^>]+src\\s*=\\s*["']${raw.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}["']`).test(p.html);
        if (isFrame) await crawlDocument(u, seen);
      }
      if (u.hash) {
        const target = await get(u.href);
        if (target.status === 200 && /html/.test(target.type)) {
          t.ok(idsIn(target.body.toString('utf8')).has(decodeURIComponent(u.hash.slice(1))), `anchor ${u.pathname}${u.hash} (from ${p.from})`);
        }
      }
    }
  }
  const seenAnchor = new Set();
  for (const a of anchors) {
    if (!a.id || seenAnchor.has(a.from + a.id)) continue;
    seenAnchor.add(a.from + a.id);
    t.ok(ids.has(a.id), `in-page anchor #${a.id} (from ${a.from})`, 'no element with that id');
  }
  return { ids, parts };
}

try {
  const seen = new Set();
  const index = await crawlDocument(new URL('/', folio.url), seen);
  await crawlDocument(new URL('/404.html', folio.url), seen);

  // The article's contract with its loader: fragments exist, the TOC and references point
  // at real sections, and a missing fragment is a real 404 (never the page itself).
  if (index) {
    const html = index.parts[0].html;
    const tocTargets = [...html.matchAll(/<nav[^>]*class="toc"[\s\S]*?<\/nav>/g)].flatMap((m) => [...m[0].matchAll(/href="#([^"]+)"/g)].map((x) => x[1]));
    t.ok(tocTargets.length >= 8, 'table of contents lists 8+ sections', `found ${tocTargets.length}`);
    const refs = [...html.matchAll(/href="#(ref-[^"]+)"/g)];
    t.ok(refs.length >= 10, 'article cites references by #ref- links', `found ${refs.length}`);
    const forms = { '/assets/': /(src|href|srcset)="\/assets\//, 'assets/': /(src|href|srcset)="assets\//, '../assets/': /(src|href|srcset)="\.\.\/assets\//, };
    for (const [name, re] of Object.entries(forms)) t.ok(re.test(html), `page uses the ${name} reference form`);
  }
  const missing = await get(new URL('fragments/no-such-fragment-for-tests.html', folio.url).href);
  t.ok(missing.status === 404, 'a missing fragment is a 404', `HTTP ${missing.status}`);
  console.log(`checked ${checkedUrls.size} URLs`);
  if (process.env.VERBOSE) for (const u of checkedUrls) console.log("  " + u.slice(origin.length));
} finally {
  await folio.stop().catch((e) => t.ok(false, 'folio stops on SIGTERM', e.message));
}
t.finish();
