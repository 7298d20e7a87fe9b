// GET /api/source: one source address or network, whole (the dashboard's source view), the same summary as
// `threatcol source show` (store/source-summary.ts), within the feed's read slots, aborted on hang-up.
import type { ServerResponse } from 'node:http';
import { errorBody } from '../errors.js';
import { type SourceQuery, sourceQueryProblem, summarizeSource } from '../store/source-summary.js';
import type { BlocklistView } from './blocklist-panel.js';
import type { DashboardStore } from './dashboard-routes.js';
import type { LiveFeed } from './live-feed.js';
import { answerFromStore, searchQueryFrom, sendError } from './search-route.js';

/** `?address=ADDRESS|CIDR&since=&until=`: since and until as for /api/search, since by default 30 days ago. */
export async function serveSource(
  res: ServerResponse,
  params: URLSearchParams,
  deps: { store: DashboardStore; feed: LiveFeed; blocklist?: BlocklistView | undefined },
  now: number,
): Promise<void> {
  const query = sourceQueryFrom(params, now);
  if (typeof query === 'string') {
    sendError(res, 400, errorBody('BAD_REQUEST', query));
    return;
  }
  // The panel's watch starts with its first visitor: started now, it has read the decisions by the answer.
  deps.blocklist?.start();
  await answerFromStore(res, deps.feed, async (signal) => {
    const summary = await summarizeSource(deps.store.reader, query, { signal });
    // From the process's one watched copy of the decisions, by the function `source show` runs on the store's.
    const decisions = deps.blocklist?.source(query.address, now) ?? {
      blocked: null,
      allowed: null,
      blocks_within: 0,
      blocks_within_first: [],
    };
    return { ...summary, ...decisions, since: new Date(query.since).toISOString() };
  });
}

function sourceQueryFrom(params: URLSearchParams, now: number): SourceQuery | string {
  const address = params.get('address')?.trim() ?? '';
  if (address === '') return 'address is required: an IPv4/IPv6 address or a CIDR';
  const window = new URLSearchParams({ since: params.get('since') || '30d' });
  const until = params.get('until');
  if (until) window.set('until', until);
  const searched = searchQueryFrom(window, now);
  if (typeof searched === 'string') return searched;
  const query: SourceQuery = { address, since: searched.since };
  if (searched.until !== undefined) query.until = searched.until;
  return sourceQueryProblem(query, now) ?? query;
}
