// Launch Debian's Chromium through playwright-core. Never downloads a browser.
// The default launch() gives every run a fresh temporary profile.
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export function chromiumPath() {
  return process.env.CHROMIUM_BIN || '/usr/bin/chromium';
}

export async function launchBrowser(opts = {}) {
  if (!fs.existsSync(chromiumPath())) {
    // One line naming the package, not playwright's stack trace.
    console.error(`${path.basename(process.argv[1])}: ${chromiumPath()} is missing: install the Debian `
      + 'package chromium (`bash .ci/setup --tests` does)');
    process.exit(1);
  }
  return chromium.launch({
    executablePath: chromiumPath(),
    args: CHROMIUM_ARGS,
    timeout: 30000,
    ...opts,
  });
}
