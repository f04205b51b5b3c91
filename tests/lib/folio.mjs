// Start the folio binary on an ephemeral port and hand back its URL.
//
//   const f = await startFolio({ root: '/path/to/article' });
//   ... fetch(f.url + 'index.html') ...
//   await f.stop();
//
// The binary comes from $FOLIO_BIN (set by tests/meson.build). folio prints on stderr a
// line containing http://127.0.0.1:PORT/; stdout is the access log, which we keep
// draining so the pipe never fills and blocks the server.
import { spawn } from 'node:child_process';

export async function startFolio({ root, args = [], env = {}, timeoutMs = 10000, bin } = {}) {
  const exe = bin || process.env.FOLIO_BIN;
  if (!exe) throw new Error('FOLIO_BIN is not set (run through meson test, or export it)');
  if (!root) throw new Error('startFolio: root is required');
  const argv = ['--root', root, '--host', '127.0.0.1', '--port', '0', ...args];
  const proc = spawn(exe, argv, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const log = [];            // recent stdout/stderr lines, for error messages
  const remember = (l) => { log.push(l); if (log.length > 200) log.shift(); };
  let exited = null;
  const exitPromise = new Promise((resolve) => {
    proc.on('exit', (code, signal) => { exited = { code, signal }; resolve(exited); });
  });
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (d) => d.split('\n').filter(Boolean).forEach((l) => remember(l)));

  const url = await new Promise((resolve, reject) => {
    let buf = '';
    let found = false;
    const timer = setTimeout(() => {
      if (!found) reject(new Error(`folio did not print its URL within ${timeoutMs} ms\n` + log.join('\n')));
    }, timeoutMs);
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        remember('[stderr] ' + line);
        if (!found) {
          const m = line.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
          if (m) { found = true; clearTimeout(timer); resolve(`http://127.0.0.1:${m[1]}/`); }
        }
      }
    });
    proc.on('error', (e) => { clearTimeout(timer); reject(e); });
    exitPromise.then((x) => {
      clearTimeout(timer);
      if (!found) reject(new Error(`folio exited (${JSON.stringify(x)}) before printing its URL\n` + log.join('\n')));
    });
  });
  const port = Number(new URL(url).port);

  async function stop(graceMs = 5000) {
    if (exited) return exited;
    proc.kill('SIGTERM');
    const t = new Promise((r) => setTimeout(r, graceMs, 'timeout'));
    const res = await Promise.race([exitPromise, t]);
    if (res === 'timeout') {
      proc.kill('SIGKILL');
      await exitPromise;
      throw new Error(`folio did not exit within ${graceMs} ms of SIGTERM`);
    }
    return res;
  }

  return { url, port, proc, log, stop, exited: () => exited };
}
