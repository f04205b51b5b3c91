// The page's reference list and the BibTeX file it offers (assets/references.bib) hold the same
// works in the same order: for each pair the title, the year, the arXiv id (or its absence) and the
// authors the list names (surnames and initials, "et al." where the file says "and others", or one
// team name) agree. Reads the source files only (no server needed).
import fs from 'node:fs';
import path from 'node:path';
import { SOURCE_ROOT, tally, decodeEntities } from './common.mjs';

const t = tally('article-references');
const read = (rel) => fs.readFileSync(path.join(SOURCE_ROOT, rel), 'utf8');
const squash = (s) => s.replace(/\s+/g, ' ').trim();

// ---- the list, as the page writes it: "Authors. <cite>Title.</cite> Venue year. arXiv:id." ----
const page = read('www/index.html');
const ol = (page.match(/<ol class="references">([\s\S]*?)<\/ol>/) || [])[1] || '';
const items = [...ol.matchAll(/<li id="([^"]+)">([\s\S]*?)<\/li>/g)].map((m) => {
  const [, id, html] = m;
  const [before, title, after] = (/^([\s\S]*?)<cite>([\s\S]*?)<\/cite>([\s\S]*)$/.exec(html) || []).slice(1);
  const plain = (s) => squash(decodeEntities((s || '').replace(/<[^>]+>/g, '')));
  const rest = plain(after);
  const arxiv = (/arXiv:(\d{4}\.\d{4,5})/.exec(rest) || [])[1] || null;
  const years = rest.replace(/arXiv:\S+/g, '').match(/\b(?:19|20)\d\d\b/g) || [];
  return { id, authors: listAuthors(plain(before)), title: plain(title).replace(/\.$/, ''), year: years.at(-1) || null, arxiv };
});

// "Hoffmann, J., Borgeaud, S., Mensch, A., et al." or "Chen, T., Xu, B. and Guestrin, C." are people;
// anything that does not read as such pairs throughout ("Llama Team, AI @ Meta.") is one team name.
function listAuthors(s) {
  const etal = /,? et al\.$/.test(s);
  const body = s.replace(/,? et al\.$/, '').trim();
  const person = /([^,]+?), ((?:[A-Z][a-z]?\.[ -]?)+?)(?:,\s+|\s+and\s+|$)/y;
  const people = [];
  let end = 0, m;
  while (end < body.length && (m = person.exec(body))) {
    people.push({ surname: m[1].trim(), initials: squash(m[2]) });
    end = person.lastIndex;
  }
  if (!people.length || end !== body.length) return { team: s.replace(/\.$/, '') };
  return { people, etal };
}

// ---- the BibTeX file: @type{key, field = {value} or "value", ...} with nested braces ---------------
const LATEX = { "\\'e": 'é', "\\'a": 'á', "\\'o": 'ó', "\\'i": 'í', '\\"o': 'ö', '\\"u': 'ü', '\\"a': 'ä', '\\c{c}': 'ç', '\\~n': 'ñ' };
function unlatex(s) {
  let out = s.replace(/\{(\\[^{}]+|\\[a-z]\{[a-z]\})\}/g, '$1');
  for (const [k, v] of Object.entries(LATEX)) out = out.split(k).join(v);
  return out;
}
function parseBib(text) {
  const entries = [];
  let i = 0;
  for (;;) {
    const at = text.indexOf('@', i);
    if (at < 0) break;
    const head = /^@(\w+)\s*\{\s*([^,\s]+)\s*,/.exec(text.slice(at));
    if (!head) { entries.push({ error: `unreadable entry at offset ${at}` }); break; }
    let j = at + head[0].length, depth = 1;
    const fields = {};
    while (j < text.length && depth > 0) {
      const f = /^\s*(\w+)\s*=\s*/.exec(text.slice(j));
      if (!f) {
        const c = text[j++];
        if (c === '}') depth--;
        continue;
      }
      j += f[0].length;
      let value = '';
      if (text[j] === '{') {
        let d = 0, k = j;
        do { if (text[k] === '{') d++; else if (text[k] === '}') d--; k++; } while (d > 0 && k < text.length);
        value = text.slice(j + 1, k - 1);
        j = k;
      } else {
        const v = /^("[^"]*"|\w+)/.exec(text.slice(j));
        value = v ? v[1].replace(/^"|"$/g, '') : '';
        j += v ? v[0].length : 1;
      }
      fields[f[1].toLowerCase()] = squash(value);
      const sep = /^\s*,?/.exec(text.slice(j));
      j += sep[0].length;
    }
    entries.push({ type: head[1].toLowerCase(), key: head[2], fields });
    i = j;
  }
  return entries;
}
function bibAuthors(s) {
  if (/^\{[^{}]*\}$/.test(s)) return { team: s.slice(1, -1) };
  const names = s.split(/\s+and\s+/);
  const etal = names.at(-1) === 'others';
  const people = (etal ? names.slice(0, -1) : names).map((n) => {
    const [surname, first = ''] = n.split(/,\s*/);
    const initials = first.split(/\s+/).filter(Boolean).map((w) => w[0] + '.').join(' ');
    return { surname: unlatex(surname), initials };
  });
  return { people, etal };
}

const bib = parseBib(read('assets/references.bib'));
t.ok(bib.every((e) => !e.error), 'the BibTeX file parses', bib.filter((e) => e.error).map((e) => e.error).join(' '));
t.ok(items.length >= 20, 'the page lists its references', `found ${items.length}`);
t.ok(bib.length === items.length, 'the BibTeX file has one entry per reference in the list', `${bib.length} entries, ${items.length} references`);
const keys = bib.map((e) => e.key);
t.ok(new Set(keys).size === keys.length, 'BibTeX keys are unique', keys.join(' '));

const show = (a) => a.team ? `{${a.team}}` : a.people.map((p) => `${p.surname}, ${p.initials}`).join('; ') + (a.etal ? '; et al.' : '');
items.forEach((ref, n) => {
  const e = bib[n];
  const at = `reference ${n + 1} (#${ref.id})`;
  if (!e || e.error) { t.ok(false, `${at} has a BibTeX entry`); return; }
  const f = e.fields;
  t.ok(f.title && f.author && f.year, `${at}: ${e.key} has a title, authors and a year`);
  t.ok(unlatex((f.title || '').replace(/[{}]/g, '')) === ref.title, `${at}: ${e.key} has the list's title`, `list "${ref.title}", file "${f.title}"`);
  t.ok(f.year === ref.year, `${at}: ${e.key} has the list's year`, `list ${ref.year}, file ${f.year}`);
  t.ok((f.eprint || null) === ref.arxiv && (!f.eprint || f.archiveprefix === 'arXiv'), `${at}: ${e.key} has the list's arXiv id`,
    `list ${ref.arxiv}, file ${f.eprint} (${f.archiveprefix})`);
  const want = show(ref.authors), got = show(bibAuthors(f.author || ''));
  t.ok(want === got, `${at}: ${e.key} names the list's authors`, `list "${want}", file "${got}"`);
});

t.finish();
