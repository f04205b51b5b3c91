// Preview in a container as an author on macOS or Windows has it (docs/preview.md's line):
// the page open in headless Chromium (Debian's) through the published port, then an edit made
// on the host side of the bind mount must reach the open page as a live update. Steps: the page
// loads and #fragment-intro fills; the page is marked; ROOT/fragments/intro.html gets a new
// paragraph, which must appear in the page in place (the mark is still there: no reload); then
// ROOT/www/index.html gets one, which must appear too. Every wait is bounded.
// Used by test_container.py: node preview.mjs URL ROOT. Prints "N passed, M failed".
import fs from 'node:fs';
import path from 'node:path';
import { launchBrowser } from '../lib/browser.mjs';

const [url, root] = process.argv.slice(2);
if (!url || !root) {
  console.error('usage: node preview.mjs URL ROOT');
  process.exit(2);
}
const EDIT_MS = 15000; // polling every 500 ms, debounce, the client's fetch: seconds at most
let passed = 0;
const failures = [];
function check(cond, what, detail = '') {
  if (cond) { passed++; console.log(`ok   ${what}`); return; }
  failures.push(what);
  console.log(`FAIL ${what}${detail ? `: ${detail}` : ''}`);
}

const watchdog = setTimeout(() => { console.log('FAIL watchdog: 90 s'); process.exit(1); }, 90000);
const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  const resp = await page.goto(url, { waitUntil: 'load', timeout: 30000 });
  check(resp && resp.status() === 200, 'the page is a 200', resp && String(resp.status()));
  const filled = await page.waitForFunction(() => document.querySelector('#fragment-intro p'),
    null, { timeout: 15000 }).then(() => true, () => false);
  check(filled, '#fragment-intro filled');
  await page.evaluate(() => { window.previewMark = 'kept'; });

  const edits = [
    ['fragments/intro.html', 'fragment-edit', 'a fragment edited on the host'],
    ['www/index.html', 'page-edit', 'the page edited on the host'],
  ];
  for (const [file, id, what] of edits) {
    const started = Date.now();
    fs.appendFileSync(path.join(root, file), `<p id="${id}">${what}</p>\n`);
    const seen = await page.waitForFunction((x) => document.getElementById(x), id,
      { timeout: EDIT_MS }).then(() => true, () => false);
    check(seen, `${what} shows in the open page`, `not within ${EDIT_MS} ms`);
    if (seen) console.log(`     ${file}: ${Date.now() - started} ms`);
    const mark = await page.evaluate(() => window.previewMark).catch(() => undefined);
    check(mark === 'kept', `${what}: updated in place, not reloaded`);
  }
} finally {
  await browser.close();
  clearTimeout(watchdog);
}
console.log(`${passed} passed, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);
