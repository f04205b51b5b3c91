// The real-shaped article of bench/preload.mjs, generated (deterministic, no file kept in the
// repo): a 308 KB page whose script fills 15 fragments one after another, as the Ultra-Scale
// Playbook's fragment loader does, from DOMContentLoaded on; about 4 MB of fragments raw
// (a 2.3 MB SVG scatter like the real config sweep, widgets with their own scripts, tables);
// 100 images (85 in the page, 15 inside fragments); a stylesheet and a deferred script.
// One id sits inside an HTML comment, as in the real page: it is no fragment.
//
//   import { writeRealShaped } from './preload-fixture.mjs';
//   const { fragments } = writeRealShaped('/tmp/root');   // fragment names in document order
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

// mulberry32: a small deterministic generator, so every run serves the same bytes.
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Prose that compresses about as English does: a Zipf-weighted vocabulary of made-up words.
function textMaker(seed) {
  const rnd = prng(seed);
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  const letters = 'etaoinshrdlcumwfgypbvkjxqz';
  const vocab = new Set();
  while (vocab.size < 4000) {
    let w = '';
    const n = pick([2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 8, 9, 10, 11, 12]);
    for (let i = 0; i < n; i++) w += letters[Math.floor(Math.pow(rnd(), 2.2) * letters.length)];
    vocab.add(w);
  }
  const words = [...vocab].sort();
  const cum = [];
  words.reduce((acc, _, i) => { cum.push(acc + 1 / (i + 2)); return acc + 1 / (i + 2); }, 0);
  const word = () => {
    const x = rnd() * cum[cum.length - 1];
    let lo = 0, hi = cum.length - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (cum[mid] < x) lo = mid + 1; else hi = mid; }
    return words[lo];
  };
  const words_ = (n) => Array.from({ length: n }, word).join(' ');
  const sentence = () => { const s = words_(int(6, 24)); return s[0].toUpperCase() + s.slice(1) + pick('...,;:'); };
  const para = () => {
    const parts = [];
    for (let i = int(3, 8); i > 0; i--) {
      const r = rnd();
      parts.push(sentence() + (r < 0.15 ? ` <code>${word()}_${word()}()</code>`
        : r < 0.25 ? ` <a href="#${word()}">${words_(2)}</a>` : r < 0.3 ? ` <em>${words_(2)}</em>` : ''));
    }
    return `<p>${parts.join(' ')}</p>\n`;
  };
  const table = () => {
    const cols = int(3, 6);
    const rows = ['<tr>' + Array.from({ length: cols }, () => `<th>${word()}</th>`).join('') + '</tr>'];
    for (let r = int(4, 12); r > 0; r--) {
      rows.push('<tr>' + Array.from({ length: cols }, () => `<td>${rnd() < 0.5 ? int(1, 4096) : (rnd() * 100).toFixed(1)}</td>`).join('') + '</tr>');
    }
    return `<table class="data">\n${rows.join('\n')}\n</table>\n`;
  };
  const code = () => '<pre><code>' + Array.from({ length: int(4, 14) },
    () => '    '.repeat(int(0, 3)) + `${word()} = ${word()}(${word()}, ${int(0, 999)})`).join('\n') + '</code></pre>\n';
  const block = () => { const r = rnd(); return r < 0.8 ? para() : r < 0.9 ? table() : code(); };
  return { rnd, int, pick, word, words_, para, block };
}

// A valid RGB PNG of noise (incompressible, as a photo or a dense diagram is) of about `bytes`.
const CRC = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function png(t, bytes) {
  const width = 120 + t.int(0, 200), height = Math.max(8, Math.round(bytes / (width * 3)));
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let i = 0; i < raw.length; i++) raw[i] = i % (width * 3 + 1) === 0 ? 0 : Math.floor(t.rnd() * 256);
  const chunk = (kind, data) => {
    const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(kind), data]);
    const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0); ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return { width, height, data: Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]) };
}

export const FRAGMENTS = [
  ['config-sweep', 2300], ['memory-calculator', 420], ['parallelism-explorer', 260],
  ['pipeline-schedule', 200], ['activation-memory', 180], ['zero-stages', 150],
  ['tensor-parallel', 120], ['context-parallel', 90], ['expert-routing', 70], ['collectives', 60],
  ['flash-attention', 50], ['interconnect', 40], ['checkpointing', 30], ['glossary', 20],
  ['cheat-sheet', 10],
];
const PAGE_IMAGES = 85;
const FRAGMENT_IMAGES = 15; // one in each widget, two in the memory calculator, none in the sweep

// The big fragment: the configuration sweep, as the real one, a chart of the same runs in four
// linked views (memory, throughput, MFU, cost), each view carrying every run's measurements
// for its hover text: the same numbers again, hundreds of kilobytes apart. brotli's 16 MB
// window finds the repeats, gzip's 32 KB one does not: most of what brotli saves on the real
// article (a megabyte of 4.7) is here.
function sweep(t, size) {
  const runs = [];
  for (let n = 0; n < size / 4 - 600;) {
    const r = `[${t.pick([1, 2, 4, 8, 16, 32])},${t.pick([1, 2, 4, 8])},${t.pick([1, 2, 4, 8, 16])},` +
      `${(t.rnd() * 0.6).toFixed(4)},${(10 + t.rnd() * 110).toFixed(2)},${(t.rnd() * 4e4).toFixed(1)}]`;
    runs.push(r);
    n += r.length + 1;
  }
  const data = runs.join(',');
  const views = ['memory', 'throughput', 'mfu', 'cost'].map((v) =>
    `<div class="chart" data-view="${v}"></div>\n<script type="application/json" data-sweep="${v}">[${data}]</script>\n`);
  return `<div class="sweep">\n${t.para()}${views.join('')}` +
    '<script>document.querySelectorAll("script[data-sweep]").forEach(function (s) {' +
    's.previousElementSibling.dataset.runs = JSON.parse(s.textContent).length; });</script>\n</div>\n';
}

// What every chart of a plotting library carries: its theme, the same few kilobytes of JSON in
// each figure, figures apart by more than gzip's window.
function template(t) {
  const keys = Array.from({ length: 160 }, () => t.word());
  return JSON.stringify(Object.fromEntries(keys.map((k, i) => [k, i % 3 ? `#${t.int(0, 0xffffff).toString(16)}`
    : { family: t.words_(2), size: t.int(8, 18), color: `#${t.int(0, 0xffffff).toString(16)}` }])));
}

// A widget: prose, a table, charts (a data block of measurements and the theme each), an image,
// and a script that runs when injected.
function widget(t, name, size, images, theme) {
  const out = [`<div class="widget" data-widget="${name}">\n`];
  let n = 0, fig = 0;
  while (n < size) {
    let b = t.block() + t.block();
    if (n > size * 0.2) {
      const series = Array.from({ length: t.int(4200, 5200) }, () => (t.rnd() * 1000).toFixed(2));
      b += `<div class="chart" id="${name}-chart-${fig}"></div>\n<script type="application/json" data-chart="${name}-chart-${fig++}">` +
        `{"data":[{"y":[${series.join(',')}]}],"layout":{"title":"${t.words_(4)}"},"template":${theme}}</script>\n`;
    }
    out.push(b);
    n += b.length;
    if (images.length && n > size / 2) out.push(images.shift());
  }
  out.push(`<script>(function(){var el=document.querySelector('[data-widget="${name}"]');` +
    'el.querySelectorAll("script[data-chart]").forEach(function(s){el.dataset.points=JSON.parse(s.textContent).data[0].y.length;});' +
    '})();</script>\n</div>\n');
  return out.join('');
}

// The page's script: a sequential loader, as the Playbook's fragmentLoader.js: from
// DOMContentLoaded on, each fragment is fetched, set as innerHTML and its scripts run before
// the next is asked for. It announces each with the same event folio's own article sends.
const LOADER = `
function runScripts(el) {
  el.querySelectorAll('script').forEach(function (old) {
    var s = document.createElement('script');
    for (var i = 0; i < old.attributes.length; i++) s.setAttribute(old.attributes[i].name, old.attributes[i].value);
    s.textContent = old.textContent;
    old.replaceWith(s);
  });
}
async function loadFragments() {
  var boxes = document.querySelectorAll('[id^="fragment-"]');
  for (var i = 0; i < boxes.length; i++) {
    var name = boxes[i].id.slice(9);
    var res = await fetch('fragments/' + name + '.html');
    boxes[i].innerHTML = await res.text();
    runScripts(boxes[i]);
    document.dispatchEvent(new CustomEvent('folio:fragment', { detail: { name: name, state: res.ok ? 'loaded' : 'error' } }));
  }
}
document.addEventListener('DOMContentLoaded', loadFragments);
`;

function page(t, images) {
  const head = '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    '<title>The Memory Wall and the Many-GPU Machine</title>\n<link rel="icon" href="data:,">\n' +
    '<link rel="stylesheet" href="style.css">\n<script src="article.js" defer></script>\n' +
    '</head>\n<body>\n<main>\n<h1>The Memory Wall and the Many-GPU Machine</h1>\n';
  const tail = '</main>\n</body>\n</html>\n';
  const size = 308 * 1024, imageCount = images.length;
  const out = [head];
  let n = head.length + tail.length, sec = 0, frag = 0, img = 0;
  // Images and fragments spread evenly through the text, as in the real article.
  while (n < size) {
    let chunk = `<section id="s${sec}">\n<h2>${t.words_(4)}</h2>\n`;
    for (let i = 0; i < 6; i++) {
      chunk += t.block();
      if (img < imageCount && n + chunk.length >= (img + 0.5) * size / imageCount) chunk += images[img++];
    }
    if (frag < FRAGMENTS.length && n + chunk.length >= (frag + 0.5) * size / FRAGMENTS.length) {
      chunk += `<div id="fragment-${FRAGMENTS[frag++][0]}" class="fragment"></div>\n`;
    }
    if (sec === 4) chunk += '<!-- retired: <div id="fragment-old-sweep" class="fragment"></div> -->\n';
    chunk += '</section>\n';
    out.push(chunk);
    n += chunk.length;
    sec++;
  }
  while (frag < FRAGMENTS.length) out.push(`<div id="fragment-${FRAGMENTS[frag++][0]}" class="fragment"></div>\n`);
  return out.join('') + images.slice(img).join('') + tail;
}

/* Writes the article beneath root (www/, fragments/, assets/, all with one mtime) and
 * returns { fragments: names in document order, files: { relative path: bytes } }. */
export function writeRealShaped(root) {
  const t = textMaker(37);
  const files = {};
  const tag = (src, img) => `<figure><img src="${src}" width="${img.width}" height="${img.height}" alt="${t.words_(5)}"></figure>\n`;
  const imageTags = (prefix, count, from) => Array.from({ length: count }, (_, i) => {
    const img = png(t, 8000 + Math.floor(Math.pow(t.rnd(), 2) * 52000));
    const name = `assets/images/figure-${from + i}.png`;
    files[name] = img.data;
    return tag(prefix + name, img);
  });
  const pageImages = imageTags('', PAGE_IMAGES, 1);
  // Fragments are HTML set into the page: their references resolve against the page.
  const fragmentImages = imageTags('', FRAGMENT_IMAGES, PAGE_IMAGES + 1);
  const theme = template(t);
  for (const [name, kb] of FRAGMENTS) {
    files[`fragments/${name}.html`] = name === 'config-sweep' ? sweep(t, kb * 1024)
      : widget(t, name, kb * 1024, fragmentImages.splice(0, name === 'memory-calculator' ? 2 : 1), theme);
  }
  files['www/index.html'] = page(t, pageImages);
  const css = [];
  for (let n = 0; n < 42 * 1024;) {
    const rule = `.${t.word()}-${t.word()} { margin: ${t.int(0, 64)}px; color: #${t.int(0, 0xffffff).toString(16).padStart(6, '0')}; }\n`;
    css.push(rule);
    n += rule.length;
  }
  files['www/style.css'] = css.join('');
  const js = ['"use strict";\n', LOADER];
  for (let n = 0; n < 58 * 1024;) {
    const f = `function ${t.word()}_${t.int(0, 99)}(a, b) { const ${t.word()} = a.${t.word()}(${t.int(0, 999)}); return b; }\n`;
    js.push(f);
    n += f.length;
  }
  files['www/article.js'] = js.join('');
  files['www/404.html'] = '<!doctype html>\n<html lang="en"><meta charset="utf-8"><title>Not found</title><h1>Not found</h1>\n';
  const stamp = new Date(Date.now() - 3600e3);
  for (const [rel, data] of Object.entries(files)) {
    const p = path.join(root, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, data);
    fs.utimesSync(p, stamp, stamp);
  }
  return { fragments: FRAGMENTS.map(([name]) => name), files };
}
