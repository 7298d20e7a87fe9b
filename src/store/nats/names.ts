// Names in NATS (DESIGN 10): record subjects and KV keys, with a reversible encoding of sensor names.
import type { Endpoint } from '../store.js';

export const RECORDS_PREFIX = 'threatcol.records';

/**
 * One subject token (or KV key token) for any string: letters, digits, "-" and "_" stay, every other UTF-8
 * byte becomes `=XX`. Sensor names cannot contain "=", so `fw.paris` -> `fw=2Eparis` decodes unambiguously.
 */
export function encodeToken(name: string): string {
  let out = '';
  for (const ch of name) {
    if (/[A-Za-z0-9_-]/.test(ch)) {
      out += ch;
      continue;
    }
    for (const byte of Buffer.from(ch, 'utf8')) out += `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function decodeToken(token: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < token.length; i++) {
    if (token[i] === '=' && /^[0-9A-F]{2}$/.test(token.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(token.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(token[i] as string, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

export function recordSubject(endpoint: Endpoint, sensor: string): string {
  return `${RECORDS_PREFIX}.${endpoint}.${encodeToken(sensor)}`;
}

/** The narrowest subject filter for an optional endpoint and sensor. */
export function recordFilterSubject(endpoint?: Endpoint, sensor?: string): string {
  if (endpoint === undefined && sensor === undefined) return `${RECORDS_PREFIX}.>`;
  return `${RECORDS_PREFIX}.${endpoint ?? '*'}.${sensor === undefined ? '*' : encodeToken(sensor)}`;
}

/** KV key of one collector's counters for one sensor in the stats bucket. */
export function statsKey(sensor: string, collectorId: string): string {
  return `${encodeToken(sensor)}.${encodeToken(collectorId)}`;
}

/**
 * The first token of a silence's key in the stats bucket: encodeToken never writes `=` before anything but two
 * hex digits, so no sensor's counters can have it.
 */
const SILENCE_TOKEN = '=silence';

/** KV key of one sensor's silence (src/sensors/) in the stats bucket: one for the cluster. */
export function silenceKey(sensor: string): string {
  return `${SILENCE_TOKEN}.${encodeToken(sensor)}`;
}

/** The sensor of a silence's key, or null for a key that is not one. */
export function parseSilenceKey(key: string): string | null {
  const parts = key.split('.');
  return parts.length === 2 && parts[0] === SILENCE_TOKEN ? decodeToken(parts[1] as string) : null;
}

export function parseStatsKey(key: string): { sensor: string; collectorId: string } | null {
  const parts = key.split('.');
  if (parts.length !== 2 || parts[0] === SILENCE_TOKEN) return null;
  return { sensor: decodeToken(parts[0] as string), collectorId: decodeToken(parts[1] as string) };
}

/** The `user:password@` (or `token@`) part of a server URL, after its optional scheme. */
const USERINFO = /^([a-z]+:\/\/)?([^@/]*)@/i;

/** A server URL as it may be logged: any user:password@ part removed. */
export function redactServer(server: string): string {
  return server.replace(USERINFO, (_m, scheme: string | undefined) => scheme ?? '');
}

/**
 * The credentials of a `nats://user:password@host` (or `nats://token@host`) URL: the client library does not
 * read them from the URL, so they are passed as options and the URL is used without them.
 */
export function serverCredentials(server: string): { user: string; pass: string } | { token: string } | null {
  const userinfo = USERINFO.exec(server)?.[2];
  if (userinfo === undefined) return null;
  const colon = userinfo.indexOf(':');
  if (colon === -1) return { token: decodeURIComponent(userinfo) };
  return {
    user: decodeURIComponent(userinfo.slice(0, colon)),
    pass: decodeURIComponent(userinfo.slice(colon + 1)),
  };
}

/** An output's durable consumer on the records stream: the prefix marks threatcol's, the rest is the name. */
const OUTPUT_CONSUMER_BASE = 'threatcol_out';
const OUTPUT_CONSUMER = new RegExp(`^${OUTPUT_CONSUMER_BASE}([1-9][0-9]*)?_(.+)$`);

/**
 * Output names are [A-Za-z0-9_-] (config), which consumer names allow as they are; encoded anyway. Each
 * `outputs replay` makes the next generation (`threatcol_out2_siem`, ...): acks name their consumer, so a batch
 * handed out before the replay cannot be acknowledged on the consumer made by it.
 */
export function outputConsumerName(output: string, generation = 0): string {
  const prefix = `${OUTPUT_CONSUMER_BASE}${generation === 0 ? '' : generation}_`;
  return `${prefix}${encodeToken(output)}`;
}

/** The output and generation of a consumer, or null for a consumer that is not an output's. */
export function parseOutputConsumer(consumer: string): { output: string; generation: number } | null {
  const match = OUTPUT_CONSUMER.exec(consumer);
  if (!match) return null;
  const output = decodeToken(match[2] as string);
  return output ? { output, generation: Number(match[1] ?? 0) } : null;
}

/** The output a consumer belongs to, or null for a consumer that is not an output's. */
export function outputOfConsumer(consumer: string): string | null {
  return parseOutputConsumer(consumer)?.output ?? null;
}
