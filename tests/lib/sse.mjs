// A Server-Sent Events reader in node, for tests and benchmarks: GETs
// url + '__folio/events' and calls onEvent({type, data}) for every event
// (heartbeat comments and retry-only blocks are skipped). Returns the request;
// destroy() it to stop.
import http from 'node:http';

export function listenEvents(url, onEvent) {
  const req = http.get(url + '__folio/events', (res) => {
    res.setEncoding('utf8');
    let buf = '';
    res.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        let type = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) type = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length > 0) onEvent({ type, data: data.join('\n') });
      }
    });
    res.on('error', () => {});
  });
  req.on('error', () => {});
  return req;
}
