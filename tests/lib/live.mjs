// Helpers for live-reload tests and benchmarks in the browser: waiting for a page condition,
// the element at the top of the viewport, the event stream as node sees it, a copy of an article.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listenEvents } from './sse.mjs';

export const STEP_MS = 8000;   // every wait for the page to react is bounded by this

export function assert(cond, msg) { if (!cond) throw new Error(msg); }

// Waits for fn(arg) to be true in the page (polled every 10 ms), or throws naming `what`.
export async function waitFor(pg, fn, arg, what, ms = STEP_MS) {
  try {
    await pg.waitForFunction(fn, arg, { timeout: ms, polling: 10 });
  } catch (e) {
    throw new Error(`timed out after ${ms} ms waiting for ${what}`);
  }
}

// In the page: the element under the horizontal middle, just below the top edge of the viewport,
// as a path of tag names and child indices from <body>, and how far its top is above the edge.
export function topElement(pg) {
  return pg.evaluate(() => {
    const el = document.elementFromPoint(Math.floor(innerWidth / 2), 2);
    if (!el) return null;
    const parts = [];
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      parts.unshift(`${e.localName}:${Array.prototype.indexOf.call(e.parentElement.children, e)}`);
    }
    return { path: parts.join('/'), offset: -el.getBoundingClientRect().top, text: (el.textContent || '').slice(0, 60) };
  });
}

// In the page: how far above the viewport's top edge the element at `path` (from topElement)
// starts, or null if the page has no such element.
export function offsetOf(pg, path) {
  return pg.evaluate((p) => {
    let el = document.body;
    for (const part of p.split('/')) {
      const [tag, i] = part.split(':');
      el = el && el.children[Number(i)];
      if (!el || el.localName !== tag) return null;
    }
    return -el.getBoundingClientRect().top;
  }, path);
}

// Node's own view of the event stream: every event with its arrival time; next(n) waits for n.
export function listen(url) {
  const events = [];
  const waiters = [];
  const req = listenEvents(url, (ev) => {
    events.push({ ...ev, at: Date.now() });
    waiters.splice(0).forEach((f) => f());
  });
  return {
    events,
    close: () => req.destroy(),
    async next(count, ms = STEP_MS) {
      const t0 = Date.now();
      while (events.length < count && Date.now() - t0 < ms) {
        await new Promise((r) => { waiters.push(r); setTimeout(r, 50); });
      }
      return events.length >= count;
    },
  };
}

// Waits until the health endpoint counts `want` event-stream connections (exactly).
export async function waitStreams(url, want, ms = STEP_MS) {
  const t0 = Date.now();
  let h = null;
  for (;;) {
    h = await (await fetch(url + '__folio/health')).json();
    if (h.event_stream_connections === want) return h;
    if (Date.now() - t0 > ms) throw new Error(`health counts ${h.event_stream_connections} event streams, not ${want}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// A copy of the repo's article (www/, fragments/, assets/) in a temp folder, to edit freely.
export function copyArticle(srcRoot) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-article-'));
  for (const d of ['www', 'fragments', 'assets']) {
    fs.cpSync(path.join(srcRoot, d), path.join(root, d), { recursive: true });
  }
  return root;
}

// Positions just past each paragraph start tag in a page's source, outside fragment containers
// (whose placeholder the loader replaces) and outside script, style, template and noscript: the
// i-th is the i-th <p> of the live page outside those.
export function paragraphTags(html) {
  const out = [];
  const re = /<!--[\s\S]*?-->|<(script|style|template|noscript)\b[\s\S]*?<\/\1\s*>|<\/([a-zA-Z][\w-]*)\s*>|<([a-zA-Z][\w-]*)\b[^>]*>/gi;
  let inside = null, nest = 0;   // the fragment container's tag name, and how deep in it we are
  for (let m; (m = re.exec(html));) {
    const [t, , close, open] = m;
    if (close) {
      if (inside && close.toLowerCase() === inside && --nest === 0) inside = null;
    } else if (open) {
      const name = open.toLowerCase();
      if (inside) {
        if (name === inside) nest++;
      } else if (/\bid\s*=\s*["']?fragment-[^"'\s>]/i.test(t)) {
        inside = name;
        nest = 1;
      } else if (name === 'p') {
        out.push(m.index + t.length);
      }
    }
  }
  return out;
}
