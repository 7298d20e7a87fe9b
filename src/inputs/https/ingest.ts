// The request pipeline shared by both endpoints, in DESIGN 2's order: auth, media type, size, JSON, schema,
// rate limit, durable store, 200.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../../config/schema.js';
import { ThreatcolError } from '../../errors.js';
import { type ParsedBody, parseJsonBody } from '../../json/parse-json.js';
import type { CollectorMetrics } from '../../metrics/metrics.js';
import { memoIsoTime } from '../../records/iso-time.js';
import { newRecordId } from '../../records/record-id.js';
import { isAsciiText } from '../../records/stored-line.js';
import type { BuiltRecord, ReceiptContext } from '../../records/stored-record.js';
import { type Endpoint, validateBody } from '../../schemas/validate-records.js';
import type { AppendResult, RecordLog, SensorStatsStore } from '../../store/store.js';
import type { ActivityLog } from './activity-log.js';
import type { AuthenticatedSensor, Authenticator } from './auth.js';
import { firewallDedupeKeys, genericDedupeKeys, readIdempotencyKey } from './dedupe-keys.js';
import type { RateLimit, RateLimiter } from './rate-limit.js';
import { type BodyBudget, ClientGone, checkDeclaredLength, readBody } from './read-body.js';
import { sendError, sendJson } from './respond.js';

export interface RouteSpec {
  endpoint: Endpoint;
  allowRepair: boolean;
  build(input: Record<string, unknown>, ctx: ReceiptContext): BuiltRecord;
}

export interface IngestDeps {
  config: Config;
  auth: Authenticator;
  store: RecordLog;
  stats: SensorStatsStore;
  limiter: RateLimit;
  /** Per-sensor body bytes (rateLimit.bytesPerSecond), charged before parsing so failed requests count too. */
  byteLimiter: RateLimiter;
  activity: ActivityLog;
  bodyBudget: BodyBudget;
  now: () => number;
  /** Prometheus counters (DESIGN 11); absent: no metrics, no cost. */
  metrics?: CollectorMetrics;
}

/** Bodies up to this size are drained after an early rejection so the connection can be reused. */
const DRAIN_LIMIT = 64 * 1024;

export async function handleIngest(
  route: RouteSpec,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  deps: IngestDeps,
  /** Told, with the request's socket, once its key is found good (the connection is never closed for a newcomer). */
  authenticated: (socket: Socket) => void = () => {},
): Promise<void> {
  const startedAt = deps.metrics?.now() ?? 0;
  const remoteAddr = clientAddress(req);
  let sensor: string | null = null;
  let bodyRead = false;
  try {
    const now = deps.now();
    let who = deps.auth.authenticate(req.headers, now, req.socket);
    sensor = who.name;
    authenticated(req.socket);
    // Checked before the body is read: a malformed header fails fast.
    const idempotencyKey =
      deps.config.dedupe.windowSeconds > 0 && route.endpoint === 'generic'
        ? readIdempotencyKey(req.headers)
        : null;
    const gzip = checkMediaType(req);
    checkDeclaredLength(req, deps.config.server.maxBodyBytes);
    // The checks a sender can fail before uploading passed: now ask for the body.
    if (req.headers.expect !== undefined && /^100-continue$/i.test(req.headers.expect)) res.writeContinue();
    const { body, release } = await readBody(
      req,
      { limit: deps.config.server.maxBodyBytes, stallMs: deps.config.server.bodyStallTimeoutMs },
      gzip,
      deps.bodyBudget,
      who.name,
    );
    bodyRead = true;
    // A slow body may outlive its sensor: `sensor revoke` refuses what it has not yet stored.
    try {
      who = deps.auth.stillAdmitted(who, req.headers, deps.now());
    } catch (error) {
      release();
      throw error;
    }
    // Only the answer and the store's promise live across the await: the parsed body and the records are
    // garbage before the sync ends, so young-generation GCs do not copy (and promote) them.
    const pending = accept(route, body, release, who, remoteAddr, idempotencyKey, deps);
    // A promise only under `--workers` when this worker must lease rate-limit tokens from the primary.
    const accepted = pending instanceof Promise ? await pending : pending;
    const appended = await accepted.stored;
    // Duplicates were stored the first time: the sensor table counts records stored, like the metric.
    deps.stats.recordAccepted(
      who.name,
      remoteAddr,
      accepted.count - appended.duplicates,
      accepted.receivedAt,
    );
    deps.activity.accept(who.name, accepted.count, path, remoteAddr);
    // A retried delivery gets the first delivery's ids, and how many of its records were not stored again.
    sendJson(
      res,
      200,
      appended.duplicates > 0 ? answerText(appended.ids, appended.duplicates) : accepted.answer,
    );
    if (deps.metrics) {
      deps.metrics.recordsAccepted(who.name, route.endpoint, accepted.count - appended.duplicates, now);
      if (appended.duplicates > 0) deps.metrics.recordsDuplicate(appended.duplicates);
      deps.metrics.requestDone(route.endpoint, 'OK', startedAt);
    }
  } catch (error) {
    if (error instanceof ClientGone) {
      deps.activity.clientGone(req.method ?? '', path, sensor, remoteAddr);
      return;
    }
    const e =
      error instanceof ThreatcolError
        ? error
        : new ThreatcolError('INTERNAL', undefined, { cause: error as Error });
    const headers = { ...e.headers };
    if (!bodyRead && !req.complete && !smallBody(req)) headers.Connection = 'close';
    const claimed =
      sensor ??
      (e.code === 'AUTH_INVALID' || e.code === 'SENSOR_REVOKED'
        ? deps.auth.registeredName(req.headers)
        : null);
    const rejection = {
      code: e.code,
      status: e.status,
      method: req.method ?? '',
      path,
      // A revoked sensor proved its key: log and count it by name (an AUTH_INVALID name proves nothing).
      sensor: sensor ?? (e.code === 'SENSOR_REVOKED' ? claimed : null),
      remoteAddr,
      message: e.code === 'INTERNAL' ? String((error as Error)?.message) : e.message,
    };
    if (e.code === 'INTERNAL') deps.activity.internalError(rejection, error);
    else deps.activity.reject(rejection);
    if (e.code === 'INTERNAL') sendError(res, 'INTERNAL', undefined, undefined, headers);
    else sendError(res, e.code, e.message, e.details, headers);
    // Counted after the answer is on its way: a wrong key for a registered name is answered as fast as for an
    // unknown one (DESIGN 2.3: names cannot be probed).
    if (claimed !== null) {
      deps.stats.recordRejected(
        claimed,
        sensor === null && e.code !== 'SENSOR_REVOKED' ? null : remoteAddr, // a revoked sensor proved its key
        e.code,
        new Date(deps.now()).toISOString(),
      );
    }
    if (deps.metrics) {
      if (sensor !== null) deps.metrics.sensorSeen(sensor, deps.now());
      deps.metrics.requestDone(route.endpoint, e.code, startedAt);
    }
  }
}

interface Accepted {
  stored: Promise<AppendResult>;
  count: number;
  receivedAt: string;
  answer: string;
}

/**
 * Steps 6-9 on a body already read: JSON, schema, rate limit, records handed to the store; synchronous
 * unless the rate limit must ask the primary (`serve --workers`).
 */
function accept(
  route: RouteSpec,
  body: Buffer,
  release: () => void,
  who: AuthenticatedSensor,
  remoteAddr: string,
  idempotencyKey: string | null,
  deps: IngestDeps,
): Accepted | Promise<Accepted> {
  let parsed: ParsedBody;
  try {
    const byteWait = deps.byteLimiter.take(who.name, body.length, deps.now());
    if (byteWait > 0) throw rateLimited(who.name, byteWait, 'byte');
    parsed = parseJsonBody(body, route.allowRepair);
  } finally {
    release();
  }
  // One record's JSON text (the stored line is that plus a bounded set of derived fields): bounds disk use.
  if (parsed.recordSpan > deps.config.server.maxRecordBytes) {
    throw new ThreatcolError('VALIDATION_FAILED', 'a record is too large', {
      details: [
        {
          path: '',
          message: `a record is larger than server.maxRecordBytes (${deps.config.server.maxRecordBytes} bytes of JSON)`,
        },
      ],
    });
  }
  const checked = validateBody(route.endpoint, parsed.value, deps.config.server.maxRecordsPerRequest);
  if (!checked.ok) {
    throw new ThreatcolError('VALIDATION_FAILED', 'the body does not match the record schema', {
      details: checked.details,
    });
  }
  const inputs = checked.records;
  const wait = deps.limiter.take(who.name, inputs.length, deps.now());
  if (typeof wait === 'number')
    return store(route, inputs, parsed, wait, who, remoteAddr, idempotencyKey, deps);
  return wait.then((w) => store(route, inputs, parsed, w, who, remoteAddr, idempotencyKey, deps));
}

function store(
  route: RouteSpec,
  inputs: Record<string, unknown>[],
  parsed: ParsedBody,
  wait: number,
  who: AuthenticatedSensor,
  remoteAddr: string,
  idempotencyKey: string | null,
  deps: IngestDeps,
): Accepted {
  if (wait > 0) throw rateLimited(who.name, wait, 'record');
  const receivedAt = isoTime(deps.now());
  const ctx: ReceiptContext = {
    id: newRecordId,
    receivedAt,
    sensor: who.name,
    remoteAddr,
    timezone: who.timezone ?? deps.config.firewall.defaultTimezone,
    repaired: parsed.repaired,
    rules: deps.config.firewall,
    // An IPv6 link-local peer's address ends in %<interface>, a name the box chose: ASCII, nearly always.
    ascii: parsed.ascii && who.asciiName && (remoteAddr.indexOf('%') === -1 || isAsciiText(remoteAddr)),
    plainStrings: !parsed.escapes,
  };
  // The sender's own texts of the records, and whether they are canonical (dedupe keys may then hash them).
  const texts = parsed.recordTexts;
  const records: BuiltRecord[] = new Array(inputs.length);
  const ids: string[] = new Array(inputs.length);
  for (let i = 0; i < inputs.length; i++) {
    const r = route.build(inputs[i] as Record<string, unknown>, ctx);
    if (texts !== null) r.keepSentText(texts[i] as string, parsed.textsCanonical);
    records[i] = r;
    ids[i] = r.id;
  }
  const dedupeKeys =
    deps.config.dedupe.windowSeconds === 0
      ? null
      : route.endpoint === 'firewall'
        ? firewallDedupeKeys(who.name, records)
        : idempotencyKey === null
          ? null
          : genericDedupeKeys(who.name, records.length, idempotencyKey);
  return {
    stored: deps.store.append(records, dedupeKeys === null ? {} : { dedupeKeys }),
    count: records.length,
    receivedAt,
    answer: answerText(ids, 0),
  };
}

/** received_at: many requests arrive in one millisecond. */
const isoTime = memoIsoTime();

/**
 * The 200's body: the records' ids and, for a retried delivery, how many of them were not stored again. One
 * flat string: a `+=` per id built a tree of two small strings per record, kept alive until the sync.
 */
function answerText(ids: readonly string[], duplicates: number): string {
  const list = ids.length === 1 ? `["${ids[0]}"]` : JSON.stringify(ids);
  return duplicates > 0
    ? `{"accepted":${ids.length},"ids":${list},"duplicates":${duplicates}}`
    : `{"accepted":${ids.length},"ids":${list}}`;
}

/** Step 4: application/json (parameters allowed, any case); Content-Encoding gzip or none. Returns gzip?. */
function checkMediaType(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  const semi = type === undefined ? -1 : type.indexOf(';');
  const media = (semi === -1 ? type : type?.slice(0, semi))?.trim().toLowerCase();
  if (media !== 'application/json') {
    throw new ThreatcolError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Type must be application/json, not "${type ?? ''}"`,
    );
  }
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (encoding === undefined || encoding === '' || encoding === 'identity') return false;
  if (encoding === 'gzip' || encoding === 'x-gzip') return true;
  throw new ThreatcolError(
    'UNSUPPORTED_MEDIA_TYPE',
    `Content-Encoding "${encoding}" is not supported (use gzip)`,
  );
}

function smallBody(req: IncomingMessage): boolean {
  const declared = req.headers['content-length'];
  return declared !== undefined && Number(declared) <= DRAIN_LIMIT;
}

/** The client's address, with IPv4-mapped IPv6 (`::ffff:1.2.3.4`) shown as plain IPv4. */
export function clientAddress(req: IncomingMessage): string {
  const addr = req.socket.remoteAddress ?? '';
  return addr.startsWith('::ffff:') && addr.includes('.') ? addr.slice(7) : addr;
}

function rateLimited(sensor: string, wait: number, unit: 'record' | 'byte'): ThreatcolError {
  return new ThreatcolError(
    'RATE_LIMITED',
    `sensor ${sensor} is over its ${unit} rate limit; retry in ${wait} s`,
    {
      headers: { 'Retry-After': String(wait) },
    },
  );
}
