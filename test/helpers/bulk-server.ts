// A loopback stand-in for Elasticsearch's `_bulk` (no Elasticsearch can run here), answering as its reference
// documents: per-item `create` results (201, 409 version_conflict_engine_exception, 400 mapper_parsing_exception,
// 429 es_rejected_execution_exception), `errors`, whole-request 401 security_exception, 429 and 503.
import type { ServerResponse } from 'node:http';
import { answerJson, type Handler, startHttpsReceiver } from './https-receiver.js';

export interface BulkServer {
  url: string;
  ca: string;
  /** Stored documents by `index/_id`. */
  docs: Map<string, Record<string, unknown>>;
  /** Every request's headers and path, in order. */
  requests: { path: string; headers: Record<string, string | string[] | undefined>; body: string }[];
  /** Whole-request answers to give before the next ones are served normally (status, Retry-After). */
  failNext: { status: number; retryAfter?: string }[];
  /** Ids answered 429 the next this-many times they come. */
  rejectTimes: Map<string, number>;
  /** Documents whose threat contains this text are refused with a mapping error. */
  mappingErrorMarker: string;
  /** Every request answered 503, as a cluster without its shards. */
  down: boolean;
  /** Each answer waits this long (a busy cluster). */
  delayMs: number;
  /** Per `_id`: items answered 201 or 409 (already there), i.e. how often the document was taken. */
  taken: Map<string, number>;
  /** `_id`s answered 400 (mapping error). */
  refused: Set<string>;
  close(): Promise<void>;
}

export async function startBulkServer(
  t: { after(fn: () => unknown): void },
  authorization: string,
): Promise<BulkServer> {
  const state = {
    docs: new Map<string, Record<string, unknown>>(),
    requests: [] as BulkServer['requests'],
    failNext: [] as BulkServer['failNext'],
    rejectTimes: new Map<string, number>(),
    mappingErrorMarker: 'MAPPING-ERROR',
    down: false,
    delayMs: 0,
    taken: new Map<string, number>(),
    refused: new Set<string>(),
  };
  const error = (response: ServerResponse, status: number, type: string, reason: string, headers = {}) =>
    answerJson(
      response,
      status,
      { error: { root_cause: [{ type, reason }], type, reason }, status },
      headers,
    );
  const receiver = await startHttpsReceiver(t, (request, body, response) =>
    setTimeout(() => handle(request, body, response), state.delayMs),
  );
  const handle: Handler = (request, body, response) => {
    state.requests.push({ path: request.url ?? '', headers: request.headers, body });
    if (request.headers.authorization !== authorization)
      return error(
        response,
        401,
        'security_exception',
        'unable to authenticate user [elastic] for REST request',
      );
    const forced = state.down ? { status: 503, retryAfter: '1' } : state.failNext.shift();
    if (forced !== undefined)
      return error(
        response,
        forced.status,
        forced.status === 429 ? 'es_rejected_execution_exception' : 'unavailable_shards_exception',
        'rejected',
        forced.retryAfter === undefined ? {} : { 'retry-after': forced.retryAfter },
      );
    if (request.method !== 'POST' || !/^(\/[^/?]+)?\/_bulk\?/.test(request.url ?? ''))
      return error(response, 404, 'not_found', request.url ?? '');
    if (request.headers['content-type'] !== 'application/x-ndjson' || !body.endsWith('\n'))
      return error(
        response,
        400,
        'illegal_argument_exception',
        'The bulk request must be terminated by a newline',
      );
    const lines = body.slice(0, -1).split('\n');
    const items: unknown[] = [];
    for (let i = 0; i < lines.length; i += 2) {
      const action = JSON.parse(lines[i] as string).create as { _index: string; _id: string };
      const doc = JSON.parse(lines[i + 1] as string) as Record<string, unknown>;
      const key = `${action._index}/${action._id}`;
      const base = { _index: action._index, _id: action._id };
      const rejects = state.rejectTimes.get(action._id) ?? 0;
      if (rejects > 0) {
        state.rejectTimes.set(action._id, rejects - 1);
        items.push({
          create: {
            ...base,
            status: 429,
            error: {
              type: 'es_rejected_execution_exception',
              reason: 'rejected execution of coordinating operation',
            },
          },
        });
      } else if (String(doc.threat).includes(state.mappingErrorMarker)) {
        state.refused.add(action._id);
        items.push({
          create: {
            ...base,
            status: 400,
            error: {
              type: 'mapper_parsing_exception',
              reason: "failed to parse field [threat] of type [long] in document with id 'x'",
            },
          },
        });
      } else if (state.docs.has(key)) {
        state.taken.set(action._id, (state.taken.get(action._id) ?? 0) + 1);
        items.push({
          create: {
            ...base,
            status: 409,
            error: { type: 'version_conflict_engine_exception', reason: `[${action._id}]: version conflict` },
          },
        });
      } else {
        state.docs.set(key, doc);
        state.taken.set(action._id, 1);
        items.push({ create: { ...base, _version: 1, result: 'created', status: 201 } });
      }
    }
    const errors = items.some((item) => ((item as { create: { status: number } }).create.status ?? 0) >= 300);
    answerJson(response, 200, { took: 3, errors, items });
  };
  return Object.assign(state, receiver);
}
