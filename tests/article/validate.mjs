// HTML validity and accessibility checks for the article's files, straight from the source
// tree (no server needed): www/*.html and assets/**/*.html are whole documents,
// fragments/*.html are partial documents that the page's loader injects into <main>.
import fs from 'node:fs';
import path from 'node:path';
import { HtmlValidate } from 'html-validate';
import { SOURCE_ROOT, tally, decodeEntities } from './common.mjs';

const t = tally('article-validate');

// html-validate's recommended preset, with two deliberate choices:
//  - lowercase <!doctype html> is what the HTML standard writes; accept it.
//  - fragments are not documents: no doctype, <html>, <head> or <title> of their own.
const DOCUMENT_CONFIG = {
  extends: ['html-validate:recommended'],
  rules: { 'doctype-style': ['error', { style: 'lowercase' }] },
};
const FRAGMENT_CONFIG = {
  extends: ['html-validate:recommended'],
  rules: {
    'doctype-style': 'off', 'missing-doctype': 'off', 'require-sri': 'off',
    'element-required-content': 'off', 'no-implicit-close': 'error',
  },
};

function list(dir, re, recursive = false) {
  const abs = path.join(SOURCE_ROOT, dir);
  if (!fs.existsSync(abs)) return [];
  const out = [];
  for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory() && recursive) out.push(...list(rel, re, true));
    else if (e.isFile() && re.test(e.name)) out.push(rel);
  }
  return out.sort();
}

const documents = [...list('www', /\.html$/), ...list('assets', /\.html$/, true)];
const fragments = list('fragments', /\.html$/);
t.ok(documents.includes('www/index.html'), 'www/index.html exists');
t.ok(documents.includes('www/404.html'), 'www/404.html exists');
t.ok(fragments.length >= 4, 'at least four fragments', `found ${fragments.length}`);

const docValidator = new HtmlValidate(DOCUMENT_CONFIG);
const fragValidator = new HtmlValidate(FRAGMENT_CONFIG);

async function validate(rel, validator) {
  const text = fs.readFileSync(path.join(SOURCE_ROOT, rel), 'utf8');
  const report = await validator.validateString(text, rel);
  const msgs = report.results.flatMap((r) => r.messages);
  for (const m of msgs.slice(0, 20)) console.log(`  ${rel}:${m.line}:${m.column} ${m.ruleId}: ${m.message}`);
  t.ok(report.valid, `html-validate ${rel}`, `${msgs.length} problem(s)`);
  return text;
}

// ---- accessibility checks of our own -------------------------------------------------------
const stripCode = (html) => html.replace(/<!--[\s\S]*?-->/g, '').replace(/<script\b[\s\S]*?<\/script>/gi, '')
  .replace(/<style\b[\s\S]*?<\/style>/gi, '');
const attrs = (tag) => {
  const a = {};
  for (const m of tag.matchAll(/([^\s=/>]+)(?:\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
    if (m.index === 0) continue;   // the tag name
    a[m[1].toLowerCase()] = decodeEntities(m[3] ?? m[4] ?? m[5] ?? '');
  }
  return a;
};

function a11y(rel, html, { fragment }) {
  const body = stripCode(html);
  // Images need alternative text (alt="" only for decoration marked as such).
  for (const m of body.matchAll(/<img\b[^>]*>/gi)) {
    const a = attrs(m[0]);
    t.ok('alt' in a && (a.alt.trim() !== '' || a.role === 'presentation' || a['aria-hidden'] === 'true'),
      `${rel}: <img src="${a.src}"> has alt text`);
  }
  // Inline SVG that claims to be an image needs a name.
  for (const m of body.matchAll(/<svg\b[^>]*\brole="img"[^>]*>/gi)) {
    const a = attrs(m[0]);
    const after = body.slice(m.index, m.index + 400);
    t.ok(a['aria-label'] || a['aria-labelledby'] || /<title[\s>]/.test(after), `${rel}: inline svg role=img has a name`);
  }
  // Every form control is labelled: <label for>, a wrapping <label>, or aria-label(ledby).
  const labelFor = new Set([...body.matchAll(/<label\b[^>]*\bfor="([^"]+)"/gi)].map((m) => m[1]));
  const wrapped = [];
  for (const m of body.matchAll(/<label\b[^>]*>([\s\S]*?)<\/label>/gi)) wrapped.push([m.index, m.index + m[0].length]);
  for (const m of body.matchAll(/<(input|select|textarea)\b[^>]*>/gi)) {
    const a = attrs(m[0]);
    if (m[1].toLowerCase() === 'input' && /^(hidden|submit|button|reset|image)$/i.test(a.type || '')) continue;
    const inside = wrapped.some(([s, e]) => m.index > s && m.index < e);
    t.ok(inside || (a.id && labelFor.has(a.id)) || a['aria-label'] || a['aria-labelledby'],
      `${rel}: <${m[1]}${a.id ? ' id="' + a.id + '"' : ''}> is labelled`);
  }
  // Frames have a title; media have controls.
  for (const m of body.matchAll(/<iframe\b[^>]*>/gi)) t.ok(!!attrs(m[0]).title, `${rel}: <iframe> has a title`);
  for (const m of body.matchAll(/<(audio|video)\b[^>]*>/gi)) t.ok('controls' in attrs(m[0]), `${rel}: <${m[1]}> has controls`);
  // Heading order: no skipped levels going down. Documents start at h1; fragments live
  // inside an <h2> section, so their headings start at h3 or deeper.
  const levels = [...body.matchAll(/<h([1-6])\b/gi)].map((m) => +m[1]);
  let prev = fragment ? 2 : 0;
  let ok = true, where = '';
  for (const l of levels) {
    if (l > prev + 1) { ok = false; where = `h${prev} followed by h${l}`; break; }
    prev = l;
  }
  t.ok(ok, `${rel}: heading levels do not skip`, where);
  if (!fragment) {
    t.ok(/<html\b[^>]*\blang="[a-z]/i.test(html), `${rel}: <html> has a lang`);
    t.ok(levels.filter((l) => l === 1).length === 1, `${rel}: exactly one h1`, `found ${levels.filter((l) => l === 1).length}`);
  } else {
    t.ok(!levels.includes(1) && !levels.includes(2), `${rel}: no h1/h2 inside a fragment`);
  }
}

const idsOf = (html) => [...stripCode(html).matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);

for (const rel of documents) a11y(rel, await validate(rel, docValidator), { fragment: false });
const fragmentIds = new Map();
for (const rel of fragments) {
  const html = await validate(rel, fragValidator);
  a11y(rel, html, { fragment: true });
  t.ok(!/<(html|head|body)\b/i.test(html), `${rel}: is a fragment (no html/head/body)`);
  fragmentIds.set(rel, idsOf(html));
}

// The page plus all of its fragments form one document: ids must be unique across it, and
// every fragment the page names must exist (and every fragment file must be used).
const index = fs.readFileSync(path.join(SOURCE_ROOT, 'www/index.html'), 'utf8');
const seen = new Map();
for (const [src, ids] of [['www/index.html', idsOf(index)], ...fragmentIds]) {
  for (const id of ids) {
    t.ok(!seen.has(id), `id "${id}" is unique across page and fragments`, seen.has(id) ? `in ${seen.get(id)} and ${src}` : '');
    seen.set(id, src);
  }
}
const named = [...index.matchAll(/\sid="fragment-([^"]+)"/g)].map((m) => m[1]);
for (const n of named) t.ok(fragments.includes(`fragments/${n}.html`), `fragment-${n} has fragments/${n}.html`);
for (const f of fragments) t.ok(named.includes(path.basename(f, '.html')), `${f} is used by the page`);
t.ok(named.length >= 4, 'page has 4+ fragment placeholders', `found ${named.length}`);

// The article's shape (a fixture other tests rely on).
const count = (re) => (index.match(re) || []).length;
t.ok(count(/<section\b[^>]*\sid="/g) >= 8, 'page has 8+ sections with ids');
t.ok(count(/<math\b/g) >= 5, 'page has MathML equations');
t.ok(count(/<pre\b/g) >= 2, 'page has code blocks');
t.ok(count(/class="note-box"/g) >= 2 && /class="note-box-title"/.test(index) && /class="note-box-content"/.test(index), 'page has note boxes');
t.ok(count(/class="figure-legend"/g) >= 8, 'page has 8+ captioned figures');
t.ok(/class="large-image-background"/.test(index), 'page has a .large-image-background band');
t.ok(count(/<aside\b/g) >= 2, 'page has asides');
t.ok(/<audio\b[^>]*src="[^"]*%20[^"]*%2C/i.test(index), 'audio src is percent-encoded (space and comma)');
t.ok(/<iframe\b/.test(index), 'page has an iframe');
t.ok(Buffer.byteLength(index) > 80000, 'index.html is a long read', `${Buffer.byteLength(index)} bytes`);

t.finish();
