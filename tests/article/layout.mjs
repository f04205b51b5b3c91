// The article's layout in headless Chromium, at a phone's width (390 px) and a desktop's (1366 px):
// the page never scrolls sideways and nothing sticks out of it (outside a scrolling box); inside every SVG (drawn inline by a widget or fragment, or an
// SVG file shown as an image and opened here as its own document) no two text boxes overlap, no text
// leaves the drawing or half-overlaps a filled shape (a label inside a tile is fine); widget text is never smaller than 11 px as rendered and figure text
// never smaller than 9 px, on a desktop and on a 390-px phone alike (SVG files as shown, inline figure SVG, the roofline iframe's plot); no select
// would cut off any of its options; displayed equations fit the desktop column without scrolling; code in a table wraps only at a space,
// a comma or a dot. Screenshots of
// each width and of every widget and figure go to $FOLIO_ARTIFACTS (layout-*.png).
import fs from 'node:fs';
import path from 'node:path';
import { startFolio } from '../lib/folio.mjs';
import { launchBrowser } from '../lib/browser.mjs';
import { SOURCE_ROOT, tally, watchdog } from './common.mjs';

const t = tally('article-layout');
const ARTIFACTS = process.env.FOLIO_ARTIFACTS || path.join(SOURCE_ROOT, 'build', 'artifacts');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const shot = (name) => path.join(ARTIFACTS, `layout-${name.replace(/[^a-z0-9-]+/gi, '_')}.png`);

const WIDGET_MIN_PX = 11;     // widget text, as rendered, at every width
const FIGURE_MIN_PX = 9;      // figure text at both widths
// Where an overrun hidden by body { overflow-x: clip } is looked for: the widgets, figures, tables and
// displayed maths (running text is article-text's and checked by the page's own scroll width).
const OVERRUN_SCOPE = '[id^="fragment-"], figure, table, pre, math';
// The widgets' first state, then long schedules, context parallelism and the Llama layer form.
const STATES = [
  { name: '' },
  { name: 'busy examples', presets: { 'pipeline-schedule': 'p8-m64', 'parallelism-explorer': '70b-131k', 'memory-calculator': '7b-llama' } },
];
const WIDTHS = [
  ['phone', { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }],
  ['desktop', { viewport: { width: 1366, height: 900 } }],
];

let folio, browser;
const cleanup = async () => { await browser?.close().catch(() => {}); await folio?.stop().catch(() => {}); };
watchdog(230000, cleanup);

// In the page: every text box of one SVG (client rectangles), and which pairs overlap or leave it.
// Runs in the browser; `scale` converts the SVG's own pixels to the page's when it is shown as an image.
function svgTextProblems(svg, scale, minPx) {
  const out = { overlaps: [], outside: [], small: [], count: 0, minSize: Infinity };
  const box = svg.getBoundingClientRect();
  const texts = [...svg.querySelectorAll('text')].filter((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && el.textContent.trim() !== '' && getComputedStyle(el).visibility !== 'hidden';
  });
  const rects = texts.map((el) => el.getBoundingClientRect());
  const ctmScale = (el) => { const m = el.getScreenCTM(); return m ? Math.hypot(m.a, m.b) : 1; };
  const label = (el) => JSON.stringify(el.textContent.trim().slice(0, 40));
  out.count = texts.length;
  // Filled shapes a label may sit inside but must not straddle (a tile row running into a line of text).
  const shapes = [...svg.querySelectorAll('rect, image')].filter((el) => {
    const cs = getComputedStyle(el);
    return el.getClientRects().length && cs.display !== 'none' && (el.tagName === 'image' || (cs.fill !== 'none' && parseFloat(cs.fillOpacity) > 0.1));
  }).map((el) => el.getBoundingClientRect()).filter((q) => q.width > 2 && q.height > 2 && q.width < box.width * 0.95);
  out.straddles = [];
  texts.forEach((el, i) => {
    const r = rects[i];
    for (const q of shapes) {
      const w = Math.min(r.right, q.right) - Math.max(r.left, q.left);
      const h = Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top);
      if (w <= 1 || h <= r.height * 0.25 || q.height < r.height) continue;   // strips of a stacked tile
      const inside = r.left >= q.left - 1 && r.right <= q.right + 1 && r.top >= q.top - 2 && r.bottom <= q.bottom + 2;
      if (!inside) { out.straddles.push(`${label(el)} runs into a shape at ${Math.round(q.left - box.left)},${Math.round(q.top - box.top)}`); break; }
    }
  });
  texts.forEach((el, i) => {
    const r = rects[i];
    if (r.left < box.left - 1 || r.top < box.top - 1 || r.right > box.right + 1 || r.bottom > box.bottom + 1) {
      out.outside.push(`${label(el)} at ${Math.round(r.left - box.left)},${Math.round(r.top - box.top)} ${Math.round(r.width)}x${Math.round(r.height)} in ${Math.round(box.width)}x${Math.round(box.height)}`);
    }
    const px = parseFloat(getComputedStyle(el).fontSize) * ctmScale(el) * scale;
    out.minSize = Math.min(out.minSize, px);
    if (minPx && px < minPx - 0.05) out.small.push(`${label(el)} ${px.toFixed(1)} px`);
    for (let j = i + 1; j < texts.length; j++) {
      const q = rects[j];
      const w = Math.min(r.right, q.right) - Math.max(r.left, q.left);
      const h = Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top);
      // Glyph boxes include ascent and descent; a sliver of shared box between lines is not an overlap.
      if (w > 1 && h > Math.min(r.height, q.height) * 0.25) out.overlaps.push(`${label(el)} and ${label(texts[j])}`);
    }
  });
  return out;
}

// In the page: the text of every element inside `root` with its rendered size, and selects whose shown
// option is wider than the box.
function htmlTextProblems(rootSel, minPx) {
  const small = [], cut = [];
  const ctx = document.createElement('canvas').getContext('2d');
  for (const root of document.querySelectorAll(rootSel)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!n.textContent.trim() || !el || el.closest('svg') || el.closest('script,style,option')) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      if (!range.getClientRects().length) continue;          // not rendered (hidden, display: none)
      const px = parseFloat(getComputedStyle(el).fontSize);
      if (px < minPx - 0.05) small.push(`${JSON.stringify(n.textContent.trim().slice(0, 40))} ${px.toFixed(1)} px in ${root.id || root.className}`);
    }
    for (const sel of root.querySelectorAll('select')) {
      if (!sel.getClientRects().length) continue;
      const cs = getComputedStyle(sel);
      ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const room = sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 18;   // the arrow
      for (const o of sel.options) {      // any choice, once chosen, must show whole
        const w = ctx.measureText(o.text).width;
        if (w > room) cut.push(`#${sel.id} would show ${JSON.stringify(o.text)} (${Math.round(w)} px in ${Math.round(room)} px)`);
      }
    }
  }
  return { small, cut };
}

async function settle(page) {
  await page.waitForFunction(() => {
    const els = [...document.querySelectorAll('[id^="fragment-"]')];
    return els.length > 0 && els.every((e) => ['loaded', 'error'].includes(e.getAttribute('data-fragment-state')));
  }, null, { timeout: 20000 });
  await page.evaluate(() => document.querySelectorAll('img[loading="lazy"]').forEach((i) => { i.loading = 'eager'; }));
  await page.waitForFunction(() => [...document.images].every((i) => i.complete), null, { timeout: 15000 }).catch(() => {});
  await page.evaluate(() => document.fonts.ready);
}

try {
  folio = await startFolio({ root: SOURCE_ROOT });
  browser = await launchBrowser();
  const svgImages = new Map();      // url -> { widths: {phone, desktop}, where }

  for (const [label, opts] of WIDTHS) {
    const ctx = await browser.newContext({ ...opts, colorScheme: 'light', reducedMotion: 'reduce' });
    const page = await ctx.newPage();
    await page.goto(folio.url, { waitUntil: 'load', timeout: 30000 });
    await settle(page);

    // 1, 2 and 3, in the widgets' first state and again with the busiest worked examples applied.
    for (const state of STATES) {
      const tag = state.name ? `${label} (${state.name})` : label;
      if (state.presets) {
        await page.evaluate((ps) => Object.entries(ps).forEach(([w, n]) => window.folioPresets?.[w]?.(n)), state.presets);
      }
      // 1. Nothing scrolls the page sideways; name the widest culprits if something does.
      const over = await page.evaluate((SCOPE) => {
        const vw = document.documentElement.clientWidth;
        const culprits = [];
        for (const el of document.body.querySelectorAll('*')) {
          const r = el.getBoundingClientRect();
          if (!r.width || !r.height || r.right <= 0 || r.left >= vw) continue;          // wholly off-screen (a skip link)
          if (r.right <= vw + 1 && r.left >= -1) continue;
          if (!el.closest(SCOPE)) continue;
          let inScroller = false;
          for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
            const ox = getComputedStyle(p).overflowX;
            if (ox === 'auto' || ox === 'scroll' || ox === 'hidden' || ox === 'clip') { inScroller = true; break; }
          }
          if (!inScroller) culprits.push(`${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}${el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : ''} to ${Math.round(r.right)} px`);
        }
        return { extra: document.documentElement.scrollWidth - window.innerWidth, culprits: culprits.slice(0, 6) };
      }, OVERRUN_SCOPE);
      // body { overflow-x: clip } would hide an overrun instead of scrolling: count what sticks out too.
      t.ok(over.extra <= 1 && over.culprits.length === 0, `${tag}: nothing is wider than the page`, `${over.extra} px of sideways scroll; past the edge: ${over.culprits.join(', ')}`);

      // 2. Inline SVG in widgets and fragments: no overlapping text, nothing outside, widget text >= 11 px.
      const inline = await page.evaluate(([fn, min, fmin]) => {
        const check = new Function(`return (${fn})`)();
        return [...document.querySelectorAll('[id^="fragment-"] svg, figure svg')].filter((s) => s.getClientRects().length).map((s) => {
          const where = s.closest('[id]')?.id || 'page';
          const widget = !!s.closest('[id^="fragment-"]');
          return { where, widget, ...check(s, 1, widget ? min : fmin) };
        });
      }, [svgTextProblems.toString(), WIDGET_MIN_PX, FIGURE_MIN_PX]);
      for (const r of inline) {
        if (!r.count) continue;
        t.ok(r.overlaps.length === 0, `${tag}: no overlapping text in the SVG of #${r.where}`, r.overlaps.join('; '));
        t.ok(r.outside.length === 0, `${tag}: no text outside the SVG of #${r.where}`, r.outside.join('; '));
        t.ok(r.straddles.length === 0, `${tag}: no text runs into a shape in the SVG of #${r.where}`, r.straddles.join('; '));
        t.ok(r.small.length === 0, `${tag}: SVG text in #${r.where} at least ${r.widget ? WIDGET_MIN_PX : FIGURE_MIN_PX} px`, r.small.join('; '));
      }

      // 3. HTML text of the widgets at least 11 px; no select hides part of its choice.
      const html = await page.evaluate(([fn, min]) => new Function(`return (${fn})`)()('.widget, .sweep, .cheat-sheet', min), [htmlTextProblems.toString(), WIDGET_MIN_PX]);
      t.ok(html.small.length === 0, `${tag}: widget text at least ${WIDGET_MIN_PX} px`, html.small.slice(0, 8).join('; '));
      t.ok(html.cut.length === 0, `${tag}: no select cuts off an option`, html.cut.join('; '));
    }

    // 5. Displayed equations fit the desktop column (a phone may scroll them, with the edge shadows).
    if (label === 'desktop') {
      const wide = await page.$$eval('math[display="block"]', (els) => els.filter((m) => m.getClientRects().length && m.scrollWidth > m.clientWidth + 1)
        .map((m) => `${m.id || m.closest('[id]')?.id || '?'} ${m.scrollWidth} px in ${m.clientWidth} px`));
      t.ok(wide.length === 0, `${label}: every displayed equation fits the column`, wide.join('; '));
    }

    // 6. Code in a table wraps only at a space or after a comma or a dot: between two consecutive glyphs that
    // sit on different lines there must be a space, or the first must be a comma or a dot.
    const badBreaks = await page.$$eval('table code', (codes) => {
      const out = [];
      let wrapped = 0;
      for (const code of codes) {
        if (!code.getClientRects().length) continue;
        const glyphs = [];
        const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          for (let i = 0; i < n.data.length; i++) {
            const r = document.createRange();
            r.setStart(n, i); r.setEnd(n, i + 1);
            const box = [...r.getClientRects()].find((q) => q.width > 0);
            glyphs.push({ ch: n.data[i], box });
          }
        }
        let prev = null, gap = '';
        for (const g of glyphs) {
          if (!g.box || /\s/.test(g.ch)) { gap += g.ch; continue; }
          if (prev && g.box.top > prev.box.bottom - 2) {
            wrapped++;
            if (!/\s/.test(gap) && !/[,.]/.test(prev.ch)) out.push(`${JSON.stringify(code.textContent.slice(0, 60))} breaks between "${prev.ch}" and "${g.ch}"`);
          }
          prev = g; gap = '';
        }
      }
      return { out, wrapped };
    });
    t.ok(badBreaks.out.length === 0, `${label}: code in tables breaks only at spaces, commas or dots (${badBreaks.wrapped} wraps)`, badBreaks.out.slice(0, 6).join('; '));

    // 7. The roofline iframe draws its plot at its own width: its text too is at least 9 px.
    await page.evaluate(() => { const f = document.querySelector('#fig-roofline-iframe iframe'); f.loading = 'eager'; f.scrollIntoView(); });
    await page.waitForFunction(() => document.querySelector('#fig-roofline-iframe iframe').contentDocument?.querySelector('#plot text'), null, { timeout: 10000 }).catch(() => {});
    const frame = page.frames().find((f) => /roofline-explorer\.html$/.test(f.url()));
    if (frame) {
      await frame.waitForFunction(() => document.querySelectorAll('#plot text').length > 0, null, { timeout: 10000 }).catch(() => {});
      const fr = await frame.evaluate(([fn, min]) => new Function(`return (${fn})`)()(document.getElementById('plot'), 1, min), [svgTextProblems.toString(), FIGURE_MIN_PX]);
      t.ok(fr.count > 0 && fr.small.length === 0 && fr.outside.length === 0 && fr.overlaps.length === 0,
        `${label}: the roofline iframe's plot text is at least ${FIGURE_MIN_PX} px, inside and apart`, `smallest ${fr.minSize.toFixed(1)} px; ${[...fr.small, ...fr.outside, ...fr.overlaps].slice(0, 5).join('; ')}`);
    } else t.ok(false, `${label}: the roofline iframe is in the page`);

    // SVG files shown as images: remember their rendered width at this viewport.
    const imgs = await page.$$eval('img', (els) => els.filter((i) => /\.svg(\?|$)/.test(i.currentSrc || i.src) && i.getClientRects().length)
      .map((i) => ({ url: i.currentSrc || i.src, width: i.getBoundingClientRect().width, where: i.closest('[id]')?.id || '' })));
    for (const i of imgs) {
      const e = svgImages.get(i.url) || { widths: {}, where: i.where };
      e.widths[label] = i.width;
      svgImages.set(i.url, e);
    }

    // Screenshots: the top of the page, every widget and figure.
    await page.screenshot({ path: shot(`${label}-top`) });
    const targets = await page.$$eval('[id^="fragment-"], figure[id]', (els) => els.map((e) => e.id).filter(Boolean));
    for (const id of targets) {
      // Viewport shots from each element's top (an element shot taller than the screen resizes the viewport).
      const shown = await page.evaluate((i) => {
        const el = document.getElementById(i);
        if (!el || !el.getClientRects().length) return false;
        el.scrollIntoView({ block: 'start' });
        return true;
      }, id);
      if (shown) await page.screenshot({ path: shot(`${label}-${id}`), timeout: 10000 });
    }
    await ctx.close();
  }

  // 4. Each SVG file as its own document at its natural size: text boxes in its own pixels, then the
  // smallest text scaled to the width the article gives it on a desktop.
  t.ok(svgImages.size >= 5, 'the article shows SVG figures as images', `${svgImages.size}`);
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 1000 }, colorScheme: 'light' });
  const page = await ctx.newPage();
  for (const [url, info] of svgImages) {
    const name = new URL(url).pathname.split('/').pop();
    await page.goto(url, { waitUntil: 'load', timeout: 20000 });
    await page.evaluate(() => document.fonts.ready);
    const vb = await page.evaluate(() => document.documentElement.viewBox?.baseVal?.width || document.documentElement.getBoundingClientRect().width);
    const scale = (info.widths.desktop || vb) / vb;
    const r = await page.evaluate(([fn, sc, min]) => new Function(`return (${fn})`)()(document.documentElement, sc, min),
      [svgTextProblems.toString(), scale, FIGURE_MIN_PX]);
    t.ok(r.count > 0, `${name} has text to check`);
    t.ok(r.overlaps.length === 0, `${name}: no overlapping text`, r.overlaps.join('; '));
    t.ok(r.outside.length === 0, `${name}: no text outside its viewBox`, r.outside.join('; '));
    t.ok(r.straddles.length === 0, `${name}: no text runs into a shape`, r.straddles.join('; '));
    t.ok(r.small.length === 0, `${name}: text at least ${FIGURE_MIN_PX} px at ${Math.round(info.widths.desktop || vb)} px wide (desktop)`,
      `smallest ${r.minSize.toFixed(1)} px: ${r.small.slice(0, 5).join('; ')}`);
    // The same at the width a 390-px phone shows it (scrolling sideways where it stops shrinking).
    t.ok(info.widths.phone > 0, `${name} is shown on a phone`);
    const phoneScale = (info.widths.phone || 0) / vb;
    const rp = await page.evaluate(([fn, sc, min]) => new Function(`return (${fn})`)()(document.documentElement, sc, min),
      [svgTextProblems.toString(), phoneScale, FIGURE_MIN_PX]);
    t.ok(rp.small.length === 0, `${name}: text at least ${FIGURE_MIN_PX} px at ${Math.round(info.widths.phone || 0)} px wide (phone)`,
      `smallest ${rp.minSize.toFixed(1)} px: ${rp.small.slice(0, 5).join('; ')}`);
    console.log(`${name}: ${r.count} texts, smallest ${r.minSize.toFixed(1)} px at desktop, ${rp.minSize.toFixed(1)} px on a phone`);
  }
  await ctx.close();
  console.log(`screenshots in ${ARTIFACTS}`);
} catch (e) {
  t.ok(false, 'layout run', e.stack || e.message);
} finally {
  await cleanup();
}
t.finish();
