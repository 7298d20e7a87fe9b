// GET /api/search: the dashboard's look-up, the same search as `threats search` (store/search-records.ts), within
// the feed's read slots: two reads at once, a few waiting, 503 DASHBOARD_BUSY past that, aborted on hang-up.
import type { ServerResponse } from 'node:http';
import { errorBody } from '../errors.js';
import { parseIsoTime } from '../records/iso-time.js';
import { isRecordEndpoint } from '../records/stored-record.js';
import {
  NETWORK_FILTER_KEYS,
  networkFilters,
  type SearchQuery,
  searchQueryProblem,
  searchRecords,
} from '../store/search-records.js';
import {
  busy,
  type DashboardStore,
  FEED_READS_AT_ONCE,
  FEED_READS_WAITING,
  feedRecord,
  storeReadSlots,
} from './dashboard-routes.js';
import type { LiveFeed } from './live-feed.js';

/** Rows per page on the dashboard: a page of results, not a second feed. */
const MAX_PAGE = 200;
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `?src=&dst=&threat=&sensor=&endpoint=&min=&src_country=&src_asn=&dst_country=&dst_asn=&since=&until=&before=
 * &limit=`: since and until are ISO times or
 * durations ago (`90m`, `24h`, `7d`); since defaults to 24 h ago, until to now. The query or a 400 message.
 */
export function searchQueryFrom(params: URLSearchParams, now: number): SearchQuery | string {
  const since = instant(params.get('since') || '24h', now);
  const untilText = params.get('until');
  const until = untilText ? instant(untilText, now) : undefined;
  if (since === null) return 'since must be an ISO time or a duration ago (90m, 24h, 7d)';
  if (until === null) return 'until must be an ISO time or a duration ago (90m, 24h, 7d)';
  const query: SearchQuery = { since };
  if (until !== undefined) query.until = until;
  for (const key of ['src', 'dst', 'threat', 'sensor', 'before'] as const) {
    const value = params.get(key)?.trim();
    if (value) query[key] = value;
  }
  const endpoint = params.get('endpoint');
  if (isRecordEndpoint(endpoint)) query.endpoint = endpoint;
  const min = Number(params.get('min'));
  if (Number.isInteger(min) && min >= 1 && min <= 4) query.minCriticality = min;
  const network = networkFilters(
    Object.fromEntries(NETWORK_FILTER_KEYS.map((key) => [key, params.get(key)?.trim() || undefined])),
  );
  if (typeof network === 'string') return network;
  return searchQueryProblem(query, now) ?? Object.assign(query, network);
}

export async function serveSearch(
  res: ServerResponse,
  params: URLSearchParams,
  store: DashboardStore,
  feed: LiveFeed,
  now: number,
): Promise<void> {
  const query = searchQueryFrom(params, now);
  if (typeof query === 'string') {
    sendError(res, 400, errorBody('BAD_REQUEST', query));
    return;
  }
  const limitText = params.get('limit');
  const limit = limitText === null ? 50 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    sendError(res, 400, errorBody('BAD_REQUEST', `limit must be an integer from 1 to ${MAX_PAGE}`));
    return;
  }
  await answerFromStore(res, feed, async (signal) => {
    const page = await searchRecords(store.reader, query, { limit, signal });
    return { records: page.records.map((l) => feedRecord(l.record)), next: page.next, bounded: page.bounded };
  });
}

/**
 * Answers `read`'s value as JSON once one of the feed's read slots is free (503 DASHBOARD_BUSY when too many
 * wait); a client that hangs up (the page left, a new question replaced this one) stops the read.
 */
export async function answerFromStore(
  res: ServerResponse,
  feed: LiveFeed,
  read: (signal: AbortSignal) => Promise<unknown>,
): Promise<void> {
  const hangUp = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) hangUp.abort();
  });
  const slot = storeReadSlots(feed).reserve(hangUp.signal);
  if (!slot) {
    busy(res, `too many dashboard reads of the store (${FEED_READS_AT_ONCE}, ${FEED_READS_WAITING} waiting)`);
    return;
  }
  try {
    await slot.granted;
    const body = `${JSON.stringify(await read(hangUp.signal))}\n`;
    res.writeHead(200, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
  } catch (error) {
    if (hangUp.signal.aborted) return;
    throw error;
  } finally {
    slot.release();
  }
}

/** An ISO time (UTC unless it names its zone), or a duration ago like `90m`, `24h`, `7d`; null when neither. */
function instant(text: string, now: number): number | null {
  const duration = /^(\d{1,6})([mhd])$/.exec(text.trim());
  if (duration) return now - Number(duration[1]) * (UNIT_MS[duration[2] as string] as number);
  return parseIsoTime(text);
}

export function sendError(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(`${body}\n`);
}
