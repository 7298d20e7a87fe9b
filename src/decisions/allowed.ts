// Whether a network is kept out of every block by an allow entry: the configuration's (blocklist.allow) or one
// added with `threatcol allow add` that has not expired.
import type { AllowEntry } from '../store/decisions.js';
import { type Network, overlaps, parseNetwork } from './networks.js';

const parsed = new Map<string, Network | null>();

function network(text: string): Network | null {
  let n = parsed.get(text);
  if (n === undefined) {
    n = parseNetwork(text);
    if (parsed.size > 10_000) parsed.clear();
    parsed.set(text, n);
  }
  return n;
}

/** The allow entry (its network's text) that covers or lies within `target`, or null. */
export function allowedBy(
  target: Network,
  configured: readonly string[],
  entries: ReadonlyMap<string, AllowEntry> | readonly AllowEntry[],
  now: number,
): string | null {
  for (const text of configured) {
    const n = network(text);
    if (n && overlaps(n, target)) return text;
  }
  for (const entry of entries.values()) {
    if (entry.until !== null && Date.parse(entry.until) <= now) continue;
    const n = network(entry.network);
    if (n && overlaps(n, target)) return entry.network;
  }
  return null;
}
