// A feed's body in its firewall's format (DESIGN 15): the active blocks it serves, already chosen and ordered.
import type { FeedFormat } from '../store/decisions.js';
import { disjointItems } from './aggregate.js';
import { entryOf, type FeedItem, itemUntil } from './feed-item.js';
import { ITEMS_PER_STEP, runWhole, type Steps } from './steps.js';

export type { FeedItem } from './feed-item.js';

export const CONTENT_TYPES: Record<FeedFormat, string> = {
  plain: 'text/plain; charset=utf-8',
  paloalto: 'text/plain; charset=utf-8',
  fortinet: 'text/plain; charset=utf-8',
  json: 'application/json',
  nftables: 'text/plain; charset=utf-8',
  mikrotik: 'text/plain; charset=utf-8',
};

/** Entries a feed of this format serves at most unless `--max-entries` says otherwise (the firewall's limit). */
export const DEFAULT_CAPS: Record<FeedFormat, number | null> = {
  plain: null,
  paloalto: 50_000,
  fortinet: 128_000,
  json: null,
  nftables: null,
  mikrotik: null,
};

/** The body; `now` gives the remaining time of formats that carry one (nftables, mikrotik). */
export function renderFeed(format: FeedFormat, items: readonly FeedItem[], now: number): string {
  return runWhole(renderSteps(format, items, now));
}

/** renderFeed in steps (steps.ts). */
export function* renderSteps(format: FeedFormat, items: readonly FeedItem[], now: number): Steps<string> {
  switch (format) {
    case 'plain':
    case 'paloalto':
    case 'fortinet':
      return (yield* mapInSteps(items, (i) => `${entryOf(i)}\n`)).join('');
    case 'json':
      return yield* renderJson(items);
    case 'nftables':
      return yield* renderNftables(items, now);
    case 'mikrotik':
      return yield* renderMikrotik(items, now);
  }
}

/** `make` of each item, yielding every ITEMS_PER_STEP. */
function* mapInSteps(items: readonly FeedItem[], make: (item: FeedItem) => string): Steps<string[]> {
  const out: string[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && i % ITEMS_PER_STEP === 0) yield;
    out[i] = make(items[i] as FeedItem);
  }
  return out;
}

/** JSON.stringify of the list's objects, made a step's items at a time and joined: the same text. */
function* renderJson(items: readonly FeedItem[]): Steps<string> {
  const parts: string[] = [];
  for (let i = 0; i < items.length; i += ITEMS_PER_STEP) {
    const objects = items.slice(i, i + ITEMS_PER_STEP).map(({ block }) => ({
      address: block.address,
      until: block.until,
      rule: block.rule,
      reason: block.reason,
      records: block.records,
      sensors: block.sensors,
    }));
    parts.push(JSON.stringify(objects).slice(1, -1));
    yield;
  }
  return `[${parts.join(',')}]\n`;
}

/** Whole seconds left, at least 1. */
function secondsLeft(item: FeedItem, now: number): number {
  return Math.max(1, Math.ceil((itemUntil(item) - now) / 1000));
}

/**
 * A script for `nft -f`: makes the table empty (create, then delete, then fill: `nft -f` applies it as one
 * transaction), two interval sets with each block's remaining time (nested blocks made disjoint: an interval
 * set refuses overlapping elements), and drop rules in input and forward.
 */
function* renderNftables(items: readonly FeedItem[], now: number): Steps<string> {
  const disjoint = disjointItems(items);
  yield;
  const element = (i: FeedItem) => `${entryOf(i)} timeout ${secondsLeft(i, now)}s`;
  const v4 = yield* mapInSteps(
    disjoint.filter((i) => i.network.family === 4),
    element,
  );
  const v6 = yield* mapInSteps(
    disjoint.filter((i) => i.network.family === 6),
    element,
  );
  const set = (name: string, type: string, list: string[]) =>
    [
      `  set ${name} {`,
      `    type ${type}`,
      '    flags interval, timeout',
      ...(list.length > 0 ? [`    elements = { ${list.join(',\n      ')} }`] : []),
      '  }',
    ].join('\n');
  return `${[
    '# threatcol blocklist: apply with nft -f',
    'table inet threatcol',
    'delete table inet threatcol',
    'table inet threatcol {',
    set('blocked4', 'ipv4_addr', v4),
    set('blocked6', 'ipv6_addr', v6),
    '  chain input {',
    '    type filter hook input priority filter - 10; policy accept;',
    '    ip saddr @blocked4 drop',
    '    ip6 saddr @blocked6 drop',
    '  }',
    '  chain forward {',
    '    type filter hook forward priority filter - 10; policy accept;',
    '    ip saddr @blocked4 drop',
    '    ip6 saddr @blocked6 drop',
    '  }',
    '}',
  ].join('\n')}\n`;
}

/** RouterOS `1d2h3m4s`. */
function routerOsTime(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${d > 0 ? `${d}d` : ''}${h > 0 ? `${h}h` : ''}${m > 0 ? `${m}m` : ''}${s > 0 || seconds === 0 ? `${s}s` : ''}`;
}

/**
 * A RouterOS script for `/import`: fills a temporary address list, then swaps it in (removing the old list
 * and renaming the new one), so the router never applies thousands of single changes to the live list.
 */
function* renderMikrotik(items: readonly FeedItem[], now: number): Steps<string> {
  const lines = ['# threatcol blocklist: /tool fetch, then /import'];
  for (const [family, path] of [
    [4, '/ip firewall address-list'],
    [6, '/ipv6 firewall address-list'],
  ] as const) {
    lines.push(`${path} remove [find list=threatcol-new]`);
    let seen = 0;
    for (const item of items) {
      if (++seen % ITEMS_PER_STEP === 0) yield;
      if (item.network.family !== family) continue;
      lines.push(
        `${path} add list=threatcol-new address=${entryOf(item)} timeout=${routerOsTime(secondsLeft(item, now))}`,
      );
    }
    lines.push(`${path} remove [find list=threatcol]`);
    lines.push(`${path} set [find list=threatcol-new] list=threatcol`);
  }
  return `${lines.join('\n')}\n`;
}
