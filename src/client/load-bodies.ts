// The request bodies of `send --count`: distinct records by default (a record number written into templates
// built once, so a body costs a few string joins, not a random record), or a few bodies sent again and again
// (--repeat) to measure how the collector answers retried deliveries.
import { randomBytes } from 'node:crypto';
import { type Endpoint, firewallTime, sampleBody, sampleRecord } from './sample-records.js';

export interface LoadBodies {
  /** Records in every request. */
  readonly recordsPerRequest: number;
  /** The body of request `i` (0-based). */
  body(i: number): string | Buffer;
  /** The Idempotency-Key of request `i`, or null to send none. */
  idempotencyKey(i: number): string | null;
}

/** Sample records the templates are made from: variety for the dashboard's top lists, built once. */
const VARIANTS = 64;
/** Firewall source ports 1024-65535: a record number is (seconds back) x PORTS + (port - 1024). */
const PORTS = 65_536 - 1024;
const TIME_MARK = '@@time@@';
const PORT_MARK = '@@sport@@';
const ADDRESS_MARK = '@@destination@@';

/**
 * N distinct records: record number r (request i holds records i*batch .. i*batch+batch-1) is written into
 * a field no two records share. /firewall: the source port, then the second of `time_received` (one second
 * earlier every 64,512 records), so the collector's content dedupe stores each one. /generic: the
 * destination address (10.0.0.0/8, then fd00::/8 past 16.7 million records); /generic is deduplicated only by
 * Idempotency-Key, but its records differ all the same, so the store can be checked either way.
 */
export function distinctBodies(
  endpoint: Endpoint,
  batch: number | undefined,
  now: number = Date.now(),
): LoadBodies {
  const record = endpoint === 'firewall' ? firewallRecords(now) : genericRecords();
  if (batch === undefined) return { recordsPerRequest: 1, body: record.text, idempotencyKey: () => null };
  return {
    recordsPerRequest: batch,
    body(i) {
      // Written record by record into one buffer: a string of a few hundred KB joined from a thousand
      // pieces cost 10 us a record to flatten, ten times this.
      const out = Buffer.allocUnsafe(batch * (record.maxBytes + 1) + 1);
      let at = 0;
      const first = i * batch;
      for (let j = 0; j < batch; j++) {
        out[at++] = j === 0 ? 0x5b : 0x2c; // [ ,
        at += out.write(record.text(first + j), at);
      }
      out[at++] = 0x5d; // ]
      return out.subarray(0, at);
    },
    idempotencyKey: () => null,
  };
}

/**
 * The same bodies in turn: `given` (a --data body), or up to 64 sample bodies. A /generic request carries an
 * Idempotency-Key per body (new for every run), so both endpoints answer a repeat as a duplicate.
 */
export function repeatedBodies(
  endpoint: Endpoint,
  options: { given?: string; batch?: number | undefined; count: number },
): LoadBodies {
  const bodies =
    options.given !== undefined
      ? [Buffer.from(options.given, 'utf8')]
      : Array.from({ length: Math.min(VARIANTS, options.count) }, () =>
          Buffer.from(sampleBody(endpoint, options.batch), 'utf8'),
        );
  const run = randomBytes(9).toString('base64url');
  const keys = bodies.map((_, v) => `threatcol-send-${run}-${v}`);
  return {
    recordsPerRequest: options.given !== undefined ? recordsIn(options.given) : (options.batch ?? 1),
    body: (i) => bodies[i % bodies.length] as Buffer,
    idempotencyKey: (i) => (endpoint === 'generic' ? (keys[i % keys.length] as string) : null),
  };
}

/** Makes record r's JSON text; no text is longer than maxBytes in UTF-8. */
interface Records {
  maxBytes: number;
  text(r: number): string;
}

/** Record r: a sample variant with its source port and second taken from r. */
function firewallRecords(now: number): Records {
  const templates = Array.from({ length: VARIANTS }, () =>
    template({ ...sampleRecord('firewall'), time_received: TIME_MARK, sport: PORT_MARK }, [
      `"${TIME_MARK}"`,
      `"${PORT_MARK}"`,
    ]),
  );
  // One time text per second: it changes every 64,512 records.
  let second = -1;
  let time = '';
  return {
    // A quoted `YYYY/MM/DD HH:MM:SS` and a port of at most 5 digits.
    maxBytes: longest(templates) + 21 + 5,
    text(r) {
      const back = Math.floor(r / PORTS);
      if (back !== second) {
        second = back;
        time = JSON.stringify(firewallTime(now - back * 1000));
      }
      const [a, b, c] = templates[r % VARIANTS] as string[];
      return `${a}${time}${b}${1024 + (r % PORTS)}${c}`;
    },
  };
}

/** Record r: a sample variant with r as its destination address. */
function genericRecords(): Records {
  const templates = Array.from({ length: VARIANTS }, () =>
    template({ ...sampleRecord('generic'), destination_ip: ADDRESS_MARK }, [`"${ADDRESS_MARK}"`]),
  );
  return {
    // A quoted fd00::ffff:ffff:ffff:ffff.
    maxBytes: longest(templates) + 2 + 25,
    text(r) {
      const [a, b] = templates[r % VARIANTS] as string[];
      return `${a}"${insideAddress(r)}"${b}`;
    },
  };
}

function longest(templates: string[][]): number {
  return Math.max(...templates.map((parts) => Buffer.byteLength(parts.join(''))));
}

/** A distinct private address for every r below 2^53: 10.0.0.0/8 first, then fd00::/8. */
export function insideAddress(r: number): string {
  if (r < 2 ** 24) return `10.${r >>> 16}.${(r >>> 8) & 255}.${r & 255}`;
  const group = (shift: number) => (Math.floor(r / 2 ** shift) % 65_536).toString(16);
  return `fd00::${group(48)}:${group(32)}:${group(16)}:${group(0)}`;
}

/** The record's JSON cut at the marks (each occurs once): the pieces between which the values go. */
function template(record: Record<string, unknown>, marks: string[]): string[] {
  let rest = JSON.stringify(record);
  const parts: string[] = [];
  for (const mark of marks) {
    const at = rest.indexOf(mark);
    parts.push(rest.slice(0, at));
    rest = rest.slice(at + mark.length);
  }
  parts.push(rest);
  return parts;
}

/** For the summary's record count when the body is given: an array counts its elements. */
function recordsIn(body: string): number {
  try {
    const parsed: unknown = JSON.parse(body);
    return Array.isArray(parsed) ? parsed.length : 1;
  } catch {
    return 1;
  }
}
