// A browser suite's steps: each run once, in order, reported `ok` or `FAIL` with its time; then
// the suite's finish (closing what it opened), whose failure counts as one more; then folio's
// log tail when anything failed, the closing "N passed, M failed" line, and the exit status.
export async function runSteps(steps, { finish, folio, label = '' }) {
  let passed = 0, failed = 0;
  try {
    for (const s of steps) {
      const t = Date.now();
      try {
        await s.fn();
        passed++;
        console.log(`ok   ${s.name} (${Date.now() - t} ms)`);
      } catch (e) {
        failed++;
        console.log(`FAIL ${s.name} (${Date.now() - t} ms)\n     ${String(e.message).split('\n').join('\n     ')}`);
      }
    }
  } finally {
    try { await finish(); } catch (e) { failed++; console.log(`FAIL final stop: ${e.message}`); }
  }
  if (failed) console.log('folio log tail:\n' + folio.log.slice(-20).join('\n'));
  console.log(`${label}${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
