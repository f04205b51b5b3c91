// The article's hard-coded numbers agree with its structure: sections are numbered 1..K in
// order and the contents list them in that order; figure captions are numbered 1..F in document
// order (fragments counted where the page injects them); every "Figure N" in the page's text is a
// link to figure N; every "section N" or "§N" link points into section N; every citation [n]
// points at the n-th entry of the references; every preset link and data-expect number names a
// preset whose anchor exists. Reads the source files only (no server needed).
import fs from 'node:fs';
import path from 'node:path';
import { SOURCE_ROOT, tally } from './common.mjs';

const t = tally('article-numbering');
const read = (rel) => fs.readFileSync(path.join(SOURCE_ROOT, rel), 'utf8');
const strip = (html) => html.replace(/<!--[\s\S]*?-->/g, (m) => ' '.repeat(m.length))
  .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, (m) => ' '.repeat(m.length));
const text = (html) => html.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim();

const page = strip(read('www/index.html'));

// The page as the reader sees it: each fragment's HTML spliced in after its container's opening tag.
let doc = page;
for (const m of [...page.matchAll(/<[a-z]+\b[^>]*\sid="fragment-([^"]+)"[^>]*>/g)].reverse()) {
  const rel = `fragments/${m[1]}.html`;
  if (!fs.existsSync(path.join(SOURCE_ROOT, rel))) continue;
  const at = m.index + m[0].length;
  doc = doc.slice(0, at) + strip(read(rel)) + doc.slice(at);
}

// ---- sections and the contents ---------------------------------------------------------
const sections = [...doc.matchAll(/<section\b[^>]*\sid="([^"]+)"[^>]*>\s*<h2\b[^>]*>\s*<span class="secno">(\d+)<\/span>([\s\S]*?)<\/h2>/g)]
  .map((m) => ({ id: m[1], no: +m[2], title: text(m[3]), at: m.index }));
t.ok(sections.length >= 10, 'page has numbered sections', `found ${sections.length}`);
sections.forEach((s, i) => t.ok(s.no === i + 1, `section #${s.id} is numbered ${i + 1}`, `it says ${s.no}`));

const toc = (page.match(/<nav\b[^>]*class="toc"[\s\S]*?<\/nav>/) || [''])[0];
const tocIds = [...toc.matchAll(/href="#([^"]+)"/g)].map((m) => m[1]);
t.ok(JSON.stringify(tocIds) === JSON.stringify(sections.map((s) => s.id)),
  'the contents list every numbered section, in order', `contents: ${tocIds.join(' ')}`);

function sectionAt(offset) {
  let found = null;
  for (const s of sections) if (s.at <= offset) found = s;
  return found;
}
function offsetOfId(id) {
  const m = new RegExp(`\\sid="${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`).exec(doc);
  return m ? m.index : -1;
}

// "section <a href="#x">N</a>", "sections <a …>N</a>", "§<a …>N</a>": N is the section holding #x.
let sectionRefs = 0;
for (const m of doc.matchAll(/(?:\b[Ss]ections?\s+|§\s*)<a\b[^>]*href="#([^"]+)"[^>]*>(\d+)<\/a>/g)) {
  sectionRefs++;
  const at = offsetOfId(m[1]);
  const s = at >= 0 ? sectionAt(at) : null;
  t.ok(s && s.no === +m[2], `"section ${m[2]}" link to #${m[1]} names its section`,
    s ? `#${m[1]} is in section ${s.no} (${s.title})` : 'no such id in a numbered section');
}
t.ok(sectionRefs >= 5, 'the text refers to sections by linked numbers', `found ${sectionRefs}`);
// An unlinked "section N" or "§N" must at least name a section that exists.
for (const m of doc.matchAll(/(?:\b[Ss]ection\s+|§\s*)(\d+)\b/g)) {
  t.ok(+m[1] >= 1 && +m[1] <= sections.length, `"${m[0]}" names an existing section`);
}

// ---- figures ---------------------------------------------------------------------------
// Figures may nest (a fragment's own <figure> inside the page's numbered one): pair the tags with
// a stack, and give each caption label to the innermost figure that holds it.
const spans = [];
const stack = [];
for (const m of doc.matchAll(/<figure\b([^>]*)>|<\/figure>/g)) {
  if (m[0].startsWith('</')) {
    const open = stack.pop();
    if (open) spans.push({ ...open, end: m.index });
  } else {
    stack.push({ id: (/\sid="([^"]+)"/.exec(m[1]) || [])[1] || null, start: m.index });
  }
}
t.ok(stack.length === 0, 'every <figure> is closed');
spans.sort((a, b) => a.start - b.start);
const figures = spans.map((f) => ({ ...f, no: null }));
for (const m of doc.matchAll(/<strong>Figure (\d+)\.<\/strong>/g)) {
  const holders = figures.filter((f) => f.start < m.index && m.index < f.end);
  const inner = holders.sort((a, b) => b.start - a.start)[0];
  t.ok(inner && inner.id && inner.no === null, `caption "Figure ${m[1]}." belongs to one <figure> with an id`);
  if (inner) inner.no = +m[1];
}
const numbered = figures.filter((f) => f.no !== null);
t.ok(numbered.length >= 15, 'page has numbered figures', `found ${numbered.length}`);
numbered.forEach((f, i) => t.ok(f.no === i + 1, `figure #${f.id} is numbered ${i + 1}`, `its caption says ${f.no}`));
const figNo = new Map(numbered.map((f) => [f.id, f.no]));

// Every mention outside a caption label is a link to that figure, in the page and in fragments.
const bare = doc.replace(/<strong>Figure \d+\.<\/strong>/g, '');
let linked = 0;
for (const m of bare.matchAll(/<a\b[^>]*href="#([^"]+)"[^>]*>\s*[Ff]igure\s+(\d+)\s*<\/a>/g)) {
  linked++;
  t.ok(figNo.get(m[1]) === +m[2], `"Figure ${m[2]}" link to #${m[1]} names its figure`,
    figNo.has(m[1]) ? `#${m[1]} is Figure ${figNo.get(m[1])}` : 'not a numbered figure');
}
const mentions = [...bare.matchAll(/\b[Ff]igures?\s+\d+/g)].length;
t.ok(mentions === linked, 'every "Figure N" in the text is a link to its figure', `${mentions} mentions, ${linked} links`);

// ---- citations -------------------------------------------------------------------------
const refs = [...((page.match(/<ol class="references">[\s\S]*?<\/ol>/) || [''])[0]).matchAll(/<li id="([^"]+)"/g)].map((m) => m[1]);
t.ok(refs.length >= 20, 'references list', `found ${refs.length}`);
const cites = [...doc.matchAll(/<a\b[^>]*class="cite"[^>]*href="#([^"]+)"[^>]*>\[(\d+)\]<\/a>/g)];
t.ok(cites.length >= 20, 'the text cites references', `found ${cites.length}`);
for (const m of cites) {
  const i = refs.indexOf(m[1]);
  t.ok(i + 1 === +m[2], `citation [${m[2]}] points at reference ${m[2]}`, i < 0 ? `#${m[1]} is not in the list` : `#${m[1]} is reference ${i + 1}`);
}
for (const r of refs) t.ok(cites.some((m) => m[1] === r), `reference #${r} is cited`);

// ---- presets: every link that loads a worked example names it twice, consistently ---------
// <a href="#preset-W-N" data-preset="W:N">, the anchor #preset-W-N exists in the page, W is a widget
// the page loads, and every data-expect="W:N:key" number belongs to such a preset.
const anchors = new Set([...page.matchAll(/\sid="(preset-[^"]+)"/g)].map((m) => m[1]));
const widgets = new Set([...page.matchAll(/\sid="fragment-([^"]+)"/g)].map((m) => m[1]));
const presetLinks = [...page.matchAll(/<a\b[^>]*>/g)].map((m) => m[0]).filter((a) => /\sdata-preset="/.test(a));
t.ok(presetLinks.length >= 5, 'the text links worked examples to widgets', `found ${presetLinks.length}`);
for (const a of presetLinks) {
  const preset = /\sdata-preset="([^"]+)"/.exec(a)[1];
  const href = (/\shref="([^"]*)"/.exec(a) || [])[1];
  const [w, n] = preset.split(':');
  t.ok(href === `#preset-${w}-${n}`, `preset link ${preset} points at #preset-${w}-${n}`, `href="${href}"`);
  t.ok(anchors.has(`preset-${w}-${n}`), `preset anchor #preset-${w}-${n} exists`);
  t.ok(widgets.has(w), `preset ${preset} names a widget on the page`);
}
for (const m of page.matchAll(/\sdata-expect="([^":]+):([^":]+):([^"]+)"[^>]*>([^<]*)</g)) {
  t.ok(anchors.has(`preset-${m[1]}-${m[2]}`), `data-expect ${m[1]}:${m[2]}:${m[3]} belongs to a preset with an anchor`);
  t.ok(/^[−-]?\d{1,3}(,\d{3})*(\.\d+)?$|^[−-]?\d+(\.\d+)?$/.test(m[4].trim()), `data-expect ${m[1]}:${m[2]}:${m[3]} holds a plain number`, `"${m[4]}"`);
}

t.finish();
