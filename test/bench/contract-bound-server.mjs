// The benchmark's contract bound (issue 20, figure 11): the measured bound (bound-server.mjs) plus what the
// product's contract makes every request do, written as plainly as the bound, with threatcol's own building
// blocks for that work and nothing else:
// - authentication (spec 5, DESIGN 2 steps 2-3): both headers, the key's SHA-256 compared in constant time with
//   the sensor's stored digest;
// - the media type and the body size while it streams (steps 4-5);
// - the JSON parse with the refusals DESIGN 2 and the security findings require: UTF-8, depth, duplicate and
//   poisoning keys (parseJsonBody), then the schema (validateBody), as the bound;
// - each record stored as DESIGN 3 says, as one line: id, received_at, criticality, the sensor's time zone,
//   threat name and id, `original` (buildFirewallRecord / buildGenericRecord, encodeLines);
// - one write + fdatasync per group commit, as the bound;
// - the answer of DESIGN 2 step 9: {"accepted": n, "ids": [...]}.
// Left out, as threatcol's own machinery rather than the contract's per-request work: rate limits and the body
// budget (the benchmark turns the limits off), the stall watch, metrics, sensor activity, logging, the in-flight
// list for a graceful stop, dedupe (off in the rows this is compared with), segment rotation.
// Started as `node contract-bound-server.mjs CERT KEY DIR NAME:KEY:TIMEZONE...` (the sensors, as `sensor add` made
// them); prints {"port"} once listening.
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { parseJsonBody } from '../../dist/json/parse-json.js';
import { digestsEqual, keyDigest } from '../../dist/keys.js';
import { newRecordId } from '../../dist/records/record-id.js';
import { encodeLines } from '../../dist/records/stored-line.js';
import { buildFirewallRecord, buildGenericRecord } from '../../dist/records/stored-record.js';
import { validateBody } from '../../dist/schemas/validate-records.js';
import { answer, config, groupCommit, serveBench } from './bench-server.mjs';

const dir = process.argv[4];
/** The registry, in memory: name -> the key's digest and the sensor's time zone. */
const sensors = new Map(
  process.argv.slice(5).map((s) => {
    const [name, key, timezone] = s.split(':');
    return [name, { digest: keyDigest(key), timezone }];
  }),
);
const fd = openSync(join(dir, 'contract.ndjson'), 'a', 0o640);
const limit = config.server.maxBodyBytes;
const log = groupCommit(fd);

serveBench(
  (req, res) => {
    const endpoint = req.url === '/generic' ? 'generic' : 'firewall';
    const presented = req.headers['x-auth_key'];
    const sensor = sensors.get(req.headers['x-sensor_name']);
    const ok = typeof presented === 'string' && digestsEqual(keyDigest(presented), sensor?.digest ?? '');
    if (!ok) return answer(res, 401, '{"error":{"code":"AUTH_INVALID"}}');
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) return answer(res, 415, '{}');
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > limit) return answer(res, 413, '{}');
      const parsed = parseJsonBody(
        chunks.length === 1 ? chunks[0] : Buffer.concat(chunks),
        endpoint === 'firewall',
      );
      const checked = validateBody(endpoint, parsed.value, config.server.maxRecordsPerRequest);
      if (!checked.ok) return answer(res, 400, '{}');
      const ctx = {
        id: newRecordId,
        receivedAt: new Date().toISOString(),
        sensor: req.headers['x-sensor_name'],
        remoteAddr: req.socket.remoteAddress ?? '',
        timezone: sensor.timezone,
        repaired: parsed.repaired,
        rules: config.firewall,
        ascii: parsed.ascii,
        plainStrings: !parsed.escapes,
      };
      const build = endpoint === 'firewall' ? buildFirewallRecord : buildGenericRecord;
      const records = checked.records.map((input, i) => {
        const r = build(input, ctx);
        if (parsed.recordTexts !== null) r.keepSentText(parsed.recordTexts[i], parsed.textsCanonical);
        return r;
      });
      const ids = JSON.stringify(records.map((r) => r.id));
      log.add([encodeLines(records)], res, `{"accepted":${records.length},"ids":${ids}}`);
    });
  },
  () => closeSync(fd),
);
