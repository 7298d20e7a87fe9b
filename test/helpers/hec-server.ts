// A loopback stand-in for Splunk's HTTP Event Collector (Splunk cannot run here), answering as Splunk documents
// it: /services/collector/event with concatenated JSON events, `ackId` per request on a channel, and
// /services/collector/ack; failures: 403 code 4 (invalid token), 400 code 6 with `invalid-event-number`,
// 400 code 7 (incorrect index), 429, 503 code 9 (server busy), 400 code 10 (channel missing).
import type { IncomingHttpHeaders } from 'node:http';
import { answerJson, type Handler, startHttpsReceiver } from './https-receiver.js';

export interface HecEvent {
  time?: number;
  sourcetype?: string;
  source?: string;
  index?: string;
  host?: string;
  fields?: Record<string, string>;
  event: Record<string, unknown>;
}

export interface HecServer {
  url: string;
  ca: string;
  /** Events taken (indexed or waiting for their ack). */
  events: HecEvent[];
  requests: { path: string; headers: IncomingHttpHeaders; body: string }[];
  /** Acknowledgement on: each accepted request gets an ackId, true after `ackAfterPolls` polls for it. */
  acks: boolean;
  ackAfterPolls: number;
  /** Whole-request answers served before the normal ones. */
  failNext: { status: number; code: number; text: string; retryAfter?: string }[];
  /** An event whose threat contains this is invalid (code 6); the events before it are taken. */
  invalidMarker: string;
  /** Indexes that exist; an event naming another one is refused with code 7. */
  indexes: Set<string>;
  /** Every event request answered 503 code 9 (server busy). */
  down: boolean;
  /** Each answer waits this long (a busy indexer). */
  delayMs: number;
  /** `threatcol_id`s of the events refused as invalid (code 6). */
  refused: Set<string>;
  /** Events taken in requests then answered 400: a 400 carries no ackId, so the client sends them again. */
  takenBeforeRefusal: number;
}

/** Splits HEC's body, JSON objects one after the other with optional whitespace between. */
export function splitConcatenated(body: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && --depth === 0) out.push(body.slice(start, i + 1));
  }
  return out;
}

export async function startHecServer(
  t: { after(fn: () => unknown): void },
  token: string,
): Promise<HecServer> {
  const polls = new Map<number, number>();
  let nextAckId = 0;
  const state = {
    events: [] as HecEvent[],
    requests: [] as HecServer['requests'],
    acks: true,
    ackAfterPolls: 0,
    failNext: [] as HecServer['failNext'],
    invalidMarker: 'INVALID-EVENT',
    indexes: new Set(['main', 'threats']),
    down: false,
    delayMs: 0,
    refused: new Set<string>(),
    takenBeforeRefusal: 0,
  };
  const receiver = await startHttpsReceiver(t, (request, body, response) =>
    setTimeout(() => handle(request, body, response), state.delayMs),
  );
  const handle: Handler = (request, body, response) => {
    const url = new URL(request.url ?? '/', 'https://hec');
    state.requests.push({ path: request.url ?? '', headers: request.headers, body });
    if (request.headers.authorization === undefined)
      return answerJson(response, 401, { text: 'Token is required', code: 2 });
    if (request.headers.authorization !== `Splunk ${token}`)
      return answerJson(response, 403, { text: 'Invalid token', code: 4 });
    const channel = request.headers['x-splunk-request-channel'] ?? url.searchParams.get('channel');
    if (state.acks && channel === undefined)
      return answerJson(response, 400, { text: 'Data channel is missing', code: 10 });
    if (url.pathname === '/services/collector/ack') {
      const answer: Record<string, boolean> = {};
      for (const id of (JSON.parse(body) as { acks: number[] }).acks) {
        const seen = (polls.get(id) ?? 0) + 1;
        polls.set(id, seen);
        answer[String(id)] = seen > state.ackAfterPolls;
      }
      return answerJson(response, 200, { acks: answer });
    }
    if (url.pathname !== '/services/collector/event')
      return answerJson(response, 404, {
        text: 'The requested URL was not found on this server.',
        code: 404,
      });
    const forced = state.down
      ? { status: 503, code: 9, text: 'Server is busy', retryAfter: '1' }
      : state.failNext.shift();
    if (forced !== undefined)
      return answerJson(
        response,
        forced.status,
        { text: forced.text, code: forced.code },
        forced.retryAfter === undefined ? {} : { 'retry-after': forced.retryAfter },
      );
    const events = splitConcatenated(body).map((text) => JSON.parse(text) as HecEvent);
    for (const [i, event] of events.entries()) {
      if (event.index !== undefined && !state.indexes.has(event.index))
        return answerJson(response, 400, { text: 'Incorrect index', code: 7, 'invalid-event-number': i });
      if (String(event.event.threat).includes(state.invalidMarker)) {
        state.refused.add(String(event.fields?.threatcol_id));
        state.takenBeforeRefusal += i;
        return answerJson(response, 400, { text: 'Invalid data format', code: 6, 'invalid-event-number': i });
      }
      state.events.push(event);
    }
    answerJson(
      response,
      200,
      state.acks ? { text: 'Success', code: 0, ackId: nextAckId++ } : { text: 'Success', code: 0 },
    );
  };
  return Object.assign(state, receiver);
}
