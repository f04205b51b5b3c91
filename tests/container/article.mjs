// The article in headless Chromium (Debian's) through a URL, e.g. folio in a container or nginx
// in front of two: the page loads, no request fails, every fragment-<name> element (at least
// MIN, default 4, the repo's article) ends filled: data-fragment-state="loaded" where the page's
// loader keeps states (www/article.js), children where it does not (docs/writing.md's minimal one).
// Prints the final document title. Used by test_container.py: node article.mjs URL [MIN]
// Prints "N passed, M failed"; exits 1 on a failure. Every wait is bounded.
import { launchBrowser } from '../lib/browser.mjs';

const url = process.argv[2];
const min = Number(process.argv[3] || 4);
if (!url) {
  console.error('usage: node article.mjs URL');
  process.exit(2);
}
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
  const failed = [];
  page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
  // ERR_NETWORK_CHANGED is Chromium dropping its requests because an address
  // appeared or went on the host (the engine adding or removing a container's
  // veth, seen once in CI), not the server failing: such a URL is asked for
  // again below, and must then be served.
  const dropped = [];
  page.on('requestfailed', (r) => {
    const why = r.failure()?.errorText || '';
    if (why === 'net::ERR_NETWORK_CHANGED') dropped.push(r.url());
    else failed.push(`${why} ${r.url()}`);
  });
  const resp = await page.goto(url, { waitUntil: 'load', timeout: 30000 });
  check(resp && resp.status() === 200, 'the page is a 200', resp && String(resp.status()));
  const settled = await page.waitForFunction(() => {
    const els = [...document.querySelectorAll('[id^="fragment-"]')];
    return els.length > 0 && els.every((e) => (e.hasAttribute('data-fragment-state')
      ? ['loaded', 'error'].includes(e.getAttribute('data-fragment-state')) : e.children.length > 0));
  }, null, { timeout: 30000 }).then(() => true, () => false);
  check(settled, 'every fragment settles');
  const frags = await page.$$eval('[id^="fragment-"]', (els) => els.map((e) => ({
    id: e.id, state: e.getAttribute('data-fragment-state') || 'loaded', children: e.children.length,
  })));
  check(frags.length >= min, 'the page has its fragment elements', `${frags.length}`);
  for (const f of frags) check(f.state === 'loaded' && f.children > 0, `#${f.id} filled`, `${f.state}, ${f.children} children`);
  for (const u of dropped) {
    const status = await page.evaluate((x) => fetch(x, { cache: 'no-store' }).then((r) => r.status, (e) => String(e)), u);
    if (status !== 200) failed.push(`${status} ${u} (again, after net::ERR_NETWORK_CHANGED)`);
  }
  check(failed.length === 0, 'no request failed', failed.join(', '));
  console.log(`title: ${await page.title()}`);
} finally {
  await browser.close();
  clearTimeout(watchdog);
}
console.log(`${passed} passed, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);
