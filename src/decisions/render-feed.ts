// A feed's body in its firewall's format (DESIGN 15): the active blocks it serves, already chosen and ordered.
import type { FeedEntry, FeedFormat } from '../store/decisions.js';
import { disjointSteps } from './aggregate.js';
import { entryOf, type FeedItem, itemUntil } from './feed-item.js';
import { ITEMS_PER_STEP, runWhole, type Steps } from './steps.js';

type FeedFamily = FeedEntry['family'];

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
export function renderFeed(
  format: FeedFormat,
  items: readonly FeedItem[],
  now: number,
  family: FeedFamily = 'any',
): string {
  return runWhole(renderSteps(format, items, now, family));
}

/**
 * renderFeed in steps (steps.ts). `family`: the feed's (`--ipv4-only`, `--ipv6-only`), so a script that replaces a
 * router's lists leaves the other family's alone.
 */
export function* renderSteps(
  format: FeedFormat,
  items: readonly FeedItem[],
  now: number,
  family: FeedFamily = 'any',
): Steps<string> {
  switch (format) {
    case 'plain':
    case 'paloalto':
    case 'fortinet':
      return yield* joinInSteps(items, (i) => `${entryOf(i)}\n`, '');
    case 'json':
      return yield* renderJson(items);
    case 'nftables':
      return yield* renderNftables(items, now);
    case 'mikrotik':
      return yield* renderMikrotik(items, now, family);
  }
}

/**
 * `make` of each item that `keep` takes, joined with `separator`: a step's items joined at a time (yielding between
 * steps), then those few pieces, so no step joins the whole list.
 */
function* joinInSteps(
  items: readonly FeedItem[],
  make: (item: FeedItem) => string,
  separator: string,
  keep: (item: FeedItem) => boolean = () => true,
): Steps<string> {
  const pieces: string[] = [];
  for (let from = 0; from < items.length; from += ITEMS_PER_STEP) {
    const step: string[] = [];
    const to = Math.min(items.length, from + ITEMS_PER_STEP);
    for (let i = from; i < to; i++) {
      const item = items[i] as FeedItem;
      if (keep(item)) step.push(make(item));
    }
    if (step.length > 0) pieces.push(step.join(separator));
    yield;
  }
  return pieces.join(separator);
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
  const disjoint = yield* disjointSteps(items);
  // In days, hours, minutes and seconds: nft refuses a number of seconds over 99,999,999 (1,157 days) as too
  // large, and a block may last up to 10 years.
  const element = (i: FeedItem) => `${entryOf(i)} timeout ${timeText(secondsLeft(i, now))}`;
  const separator = ',\n      ';
  const v4 = yield* joinInSteps(disjoint, element, separator, (i) => i.network.family === 4);
  const v6 = yield* joinInSteps(disjoint, element, separator, (i) => i.network.family === 6);
  const set = (name: string, type: string, list: string) =>
    [
      `  set ${name} {`,
      `    type ${type}`,
      '    flags interval, timeout',
      ...(list.length > 0 ? [`    elements = { ${list} }`] : []),
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

/** `1d2h3m4s`, as both RouterOS and nft write a time. */
function timeText(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${d > 0 ? `${d}d` : ''}${h > 0 ? `${h}h` : ''}${m > 0 ? `${m}m` : ''}${s > 0 || seconds === 0 ? `${s}s` : ''}`;
}

/**
 * The longest timeout RouterOS takes, 35w3d13h13m56s (2^31 hundredths of a second, by MikroTik's forum: no device
 * here to try it on). A longer block is served with it: the list is imported again at every fetch.
 */
export const ROUTEROS_MAX_SECONDS = 21_474_836;

/**
 * A RouterOS script for `/import`: fills a temporary address list, then swaps it in (removing the old list
 * and renaming the new one), so the router never applies thousands of single changes to the live list.
 */
function* renderMikrotik(items: readonly FeedItem[], now: number, served: FeedFamily): Steps<string> {
  const lines = ['# threatcol blocklist: /tool fetch, then /import'];
  for (const [family, path] of [
    [4, '/ip firewall address-list'],
    [6, '/ipv6 firewall address-list'],
  ] as const) {
    if (served !== 'any' && served !== `ipv${family}`) continue;
    lines.push(`${path} remove [find list=threatcol-new]`);
    const adds = yield* joinInSteps(
      items,
      (item) =>
        `${path} add list=threatcol-new address=${entryOf(item)} timeout=${timeText(Math.min(ROUTEROS_MAX_SECONDS, secondsLeft(item, now)))}`,
      '\n',
      (item) => item.network.family === family,
    );
    if (adds.length > 0) lines.push(adds);
    lines.push(`${path} remove [find list=threatcol]`);
    lines.push(`${path} set [find list=threatcol-new] list=threatcol`);
  }
  return `${lines.join('\n')}\n`;
}
