// Firewalls polling a feed (figure 17, figures-decisions.ts), in a process of its own pinned with the load
// generators: `node feed-poller.mjs URL CA_FILE USER:PASSWORD PER_SECOND`. Sends `go` to start polling at
// PER_SECOND with If-None-Match over 8 keep-alive connections, `halt` to pause; answers each message with the
// counts of the answers by status (0: failed) and the first failure.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';

const [url, caFile, credentials, perSecond] = process.argv.slice(2);
const dispatcher = new Agent({
  connections: 8,
  connect: { ca: readFileSync(caFile), rejectUnauthorized: true },
});
const authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
const statuses = {};
let error = '';
let etag = '';
let timer = null;

async function poll() {
  try {
    const res = await request(url, {
      dispatcher,
      headers: { authorization, ...(etag ? { 'if-none-match': etag } : {}) },
    });
    await res.body.dump();
    statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    if (res.statusCode === 200) etag = String(res.headers.etag ?? '');
  } catch (e) {
    error ||= e.message;
    statuses[0] = (statuses[0] ?? 0) + 1;
  }
}

process.on('message', async (m) => {
  if (m === 'first') await poll();
  if (m === 'go' && timer === null) {
    const started = performance.now();
    let sent = 0;
    // Paced by the clock: a late tick sends what is due, so the rate holds on a busy box.
    timer = setInterval(() => {
      const due = Math.floor(((performance.now() - started) / 1000) * Number(perSecond));
      for (; sent < due; sent++) void poll();
    }, 5);
  }
  if (m === 'halt' && timer !== null) {
    clearInterval(timer);
    timer = null;
  }
  if (m === 'close') {
    await dispatcher.close();
    process.disconnect();
    return;
  }
  process.send({ statuses, error });
});
