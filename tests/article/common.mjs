// Small helpers shared by the article checks: a pass/fail tally and a watchdog.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SOURCE_ROOT = process.env.FOLIO_SOURCE_ROOT ||
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export function tally(name) {
  let passed = 0;
  const failures = [];
  return {
    ok(cond, what, detail = '') {
      if (cond) { passed++; return true; }
      failures.push(what + (detail ? `: ${detail}` : ''));
      console.log(`FAIL ${what}${detail ? `: ${detail}` : ''}`);
      return false;
    },
    get failed() { return failures.length; },
    finish() {
      console.log(`${name}: ${passed} passed, ${failures.length} failed`);
      process.exitCode = failures.length ? 1 : 0;
    },
  };
}

// Kill the test if it runs too long: a hung server or browser must not hang CI.
export function watchdog(ms, cleanup) {
  const t = setTimeout(async () => {
    console.log(`FAIL watchdog: gave up after ${ms / 1000} s`);
    try { await cleanup?.(); } catch { /* ignore */ }
    process.exit(1);
  }, ms);
  t.unref();
  return t;
}

export function decodeEntities(s) {
  return s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (m, e) => {
    const l = e.toLowerCase();
    if (l === 'amp') return '&';
    if (l === 'lt') return '<';
    if (l === 'gt') return '>';
    if (l === 'quot') return '"';
    if (l === 'apos') return "'";
    if (l.startsWith('#x')) return String.fromCodePoint(parseInt(l.slice(2), 16));
    return String.fromCodePoint(parseInt(l.slice(1), 10));
  });
}
