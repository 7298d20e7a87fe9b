// `check`'s blocklist feeds line: a feed no firewall fetched for a day, or whose last fetch was refused (a
// firewall with a wrong password may stop enforcing the list: PAN-OS does), is a warning.
import type { DecisionsState } from '../store/decisions.js';
import type { CheckResult } from './local-checks.js';

const DAY_MS = 86_400_000;

/** null when there is no feed. */
export function checkFeeds(state: DecisionsState, now: number): CheckResult | null {
  if (state.feeds.size === 0) return null;
  const problems: string[] = [];
  for (const feed of [...state.feeds.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const fetch = state.fetches.get(feed.name);
    const since = Date.parse(fetch?.at ?? feed.createdAt);
    if (!fetch) {
      if (now - since > DAY_MS)
        problems.push(`feed ${feed.name} was never fetched (added ${feed.createdAt})`);
    } else if (now - since > DAY_MS) {
      problems.push(
        `feed ${feed.name} was last fetched ${fetch.at} by ${fetch.address}: is its firewall still pulling?`,
      );
    } else if (fetch.status === 401 || fetch.status === 403) {
      problems.push(
        `feed ${feed.name}: its last fetch (${fetch.at} by ${fetch.address}) was refused with ${fetch.status}: a firewall with a wrong password or outside --from may stop enforcing the list`,
      );
    }
  }
  if (problems.length === 0)
    return {
      name: 'feeds',
      status: 'ok',
      message: `${state.feeds.size} feed(s), each fetched within a day or added less than a day ago`,
    };
  return { name: 'feeds', status: 'warn', message: problems.join('; ') };
}
