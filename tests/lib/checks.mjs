// A flat list of checks for a browser script that is no step runner (tests/lib/steps.mjs
// is for those): each check prints "ok" or "FAIL", and the script ends with one
// "N passed, M failed" line.
//
//   const checks = makeChecks();
//   checks.check(cond, 'what', 'detail when it fails');
//   checks.fail('what went wrong');            // e.g. an exception
//   process.exitCode = checks.finish('label: ');
export function makeChecks() {
  let passed = 0;
  const failures = [];
  return {
    check(cond, what, detail = '') {
      if (cond) { passed++; console.log(`ok   ${what}`); return true; }
      failures.push(what);
      console.log(`FAIL ${what}${detail ? `: ${detail}` : ''}`);
      return false;
    },
    fail(what) { failures.push(what); },
    /* Prints the closing line; the exit status: 1 when anything failed. */
    finish(label = '') {
      console.log(`${label}${passed} passed, ${failures.length} failed`);
      return failures.length ? 1 : 0;
    },
  };
}
