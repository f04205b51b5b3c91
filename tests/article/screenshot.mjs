// The README's picture of the article (assets/images/readme-screenshot.png),
// taken again by hand after the article changes, never by the suite:
//   FOLIO_BIN=build/src/folio node tests/article/screenshot.mjs
// 1280x800, light, the contents beside the memory calculator once every
// fragment has loaded.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser } from '../lib/browser.mjs';
import { startFolio } from '../lib/folio.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = process.argv[2] || path.join(repo, 'assets', 'images', 'readme-screenshot.png');
const folio = await startFolio({ root: repo, args: ['--production', '--quiet'] });
const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
  await page.goto(folio.url, { waitUntil: 'load' });
  await page.waitForFunction(() => !document.querySelector('[data-fragment-state=loading]') &&
    document.querySelector('#fragment-memory-calculator [data-widget]'), null, { timeout: 30000 });
  await page.evaluate(() => {
    const el = document.getElementById('fragment-memory-calculator');
    window.scrollTo({ top: el.getBoundingClientRect().top + window.scrollY - 130, behavior: 'instant' });
  });
  await page.evaluate(() => document.fonts.ready);
  await page.screenshot({ path: out });
  console.log('wrote ' + out);
} finally {
  await browser.close();
  await folio.stop();
}
