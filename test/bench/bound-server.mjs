// The benchmark's measured bound for durable ingestion (issue 20): the reference server (reference-server.mjs)
// plus exactly what no collector can skip and nothing else: one JSON.parse and one schema validation per
// request (threatcol's own happy-path checker, validateBody), the body appended as one line to a file, and one
// write + fdatasync per group commit (requests that arrive while a sync runs wait for the next one) before the
// 200. No authentication, no stored-record building, no ids, no metrics.
// Started as `node bound-server.mjs CERT KEY DIR`; prints {"port"} once listening.
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { validateBody } from '../../dist/schemas/validate-records.js';
import { config, groupCommit, OK, serveBench } from './bench-server.mjs';

const dir = process.argv[4];
const fd = openSync(join(dir, 'bound.ndjson'), 'a', 0o640);
const newline = Buffer.from('\n');
const log = groupCommit(fd);

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
      log.add([body, newline], res, OK);
    });
  },
  () => closeSync(fd),
);
