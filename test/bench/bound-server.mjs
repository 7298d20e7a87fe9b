// The benchmark's measured bound for durable ingestion (issue 20): the reference server (reference-server.mjs)
// plus exactly what no collector can skip and nothing else: one JSON.parse and one schema validation per
// request (threatcol's own happy-path checker, validateBody), the body appended as one line to a file, and one
// write + fdatasync per group commit (requests that arrive while a sync runs wait for the next one) before the
// 200. No authentication, no stored-record building, no ids, no metrics.
// Started as `node bound-server.mjs CERT KEY DIR`; prints {"port"} once listening.
import { closeSync, fdatasync, openSync, write } from 'node:fs';
import { join } from 'node:path';
import { validateBody } from '../../dist/schemas/validate-records.js';
import { answerOk, config, serveBench } from './bench-server.mjs';

const dir = process.argv[4];
const fd = openSync(join(dir, 'bound.ndjson'), 'a', 0o640);
const newline = Buffer.from('\n');

/** Queued lines and the responses waiting for them; `syncing` while a batch is written and synced. */
let queue = [];
let waiting = [];
let syncing = false;
let scheduled = false;

function commit() {
  scheduled = false;
  if (syncing || queue.length === 0) return;
  syncing = true;
  const buffer = Buffer.concat(queue);
  const answers = waiting;
  queue = [];
  waiting = [];
  const done = (error) => {
    if (error) throw error;
    for (const res of answers) answerOk(res);
    syncing = false;
    if (queue.length > 0) schedule();
  };
  const writeFrom = (offset) =>
    write(fd, buffer, offset, buffer.length - offset, null, (error, n) => {
      if (error) throw error;
      if (offset + n < buffer.length) writeFrom(offset + n);
      else fdatasync(fd, done);
    });
  writeFrom(0);
}

function schedule() {
  if (scheduled) return;
  scheduled = true;
  setImmediate(commit);
}

serveBench(
  (req, res) => {
    const endpoint = req.url === '/generic' ? 'generic' : 'firewall';
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const checked = validateBody(
        endpoint,
        JSON.parse(body.toString('utf8')),
        config.server.maxRecordsPerRequest,
      );
      if (!checked.ok) {
        res.writeHead(400).end();
        return;
      }
      queue.push(body, newline);
      waiting.push(res);
      schedule();
    });
  },
  () => closeSync(fd),
);
