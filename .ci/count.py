"""Counts meson's test results (testlog.json: one JSON object per line) and
prints 'N passed, N failed'. With --total, over every file given."""
import json
import sys

files = [a for a in sys.argv[1:] if a != "--total"]
passed = failed = skipped = 0
for path in files:
    try:
        with open(path) as f:
            for line in f:
                result = json.loads(line)["result"]
                if result in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif result == "SKIP":
                    skipped += 1
                else:
                    failed += 1
    except FileNotFoundError:
        failed += 1  # a suite that never ran counts against the run
print("%d passed, %d failed" % (passed, failed) + (", %d skipped" % skipped if skipped else ""))
