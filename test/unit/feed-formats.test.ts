// Each feed format against its consumer's documented syntax: one address or CIDR per line for PAN-OS EDLs,
// FortiGate threat feeds and plain lists; RouterOS commands that fill a temporary list and swap it in; an
// nftables script that Debian's `nft` accepts (checked with `nft -c` in a fresh network namespace when run
// as root); JSON with the documented fields.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { formatNetwork, maskBytes, parseNetwork } from '../../src/config/blocklist-schema.js';
import { feedItemOf } from '../../src/decisions/feed-item.js';
import {
  type FeedItem,
  ROUTEROS_MAX_SECONDS,
  renderFeed,
  renderSteps,
} from '../../src/decisions/render-feed.js';
import { ITEMS_PER_STEP, runInSlices } from '../../src/decisions/steps.js';
import type { Block } from '../../src/store/decisions.js';
import { FEED_FORMATS } from '../../src/store/decisions.js';
import { namespaceUnavailable, needs } from '../helpers/needs.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** `nft -c` runs in a network namespace of its own, with Debian's nftables. */
const nftCheckUnavailable = namespaceUnavailable('net') || needs('nftables');

const NOW = Date.parse('2026-01-01T00:00:00Z');

function item(address: string, untilSeconds: number, fields: Partial<Block> = {}): FeedItem {
  return feedItemOf({
    address,
    rule: 'critical',
    reason: 'rule critical: criticality >= 4',
    since: new Date(NOW - 60_000).toISOString(),
    until: new Date(NOW + untilSeconds * 1000).toISOString(),
    criticality: 4,
    records: 2,
    sensors: ['fw1', 'fw2'],
    who: null,
    ...fields,
  }) as FeedItem;
}

const ITEMS = [
  item('192.0.2.7/32', 3600),
  item('198.51.100.0/24', 90_061),
  item('2001:db8:aa:bb::/64', 59.2),
];
/** A block by hand for the longest `--for` (10 years): nft refuses its seconds as one number. */
const TEN_YEARS = item('203.0.113.9/32', 3650 * 86_400, { rule: 'manual', who: 'alice' });

test('plain, paloalto and fortinet: one address (or CIDR for a wider block) per line, nothing else', () => {
  for (const format of ['plain', 'paloalto', 'fortinet'] as const) {
    const text = renderFeed(format, ITEMS, NOW);
    assert.equal(text, '192.0.2.7\n198.51.100.0/24\n2001:db8:aa:bb::/64\n');
    assert.equal(renderFeed(format, [], NOW), '');
  }
});

test('json: the documented fields of each block', () => {
  const parsed = JSON.parse(renderFeed('json', ITEMS.slice(0, 1), NOW)) as unknown[];
  assert.deepEqual(parsed, [
    {
      address: '192.0.2.7/32',
      until: '2026-01-01T01:00:00.000Z',
      rule: 'critical',
      reason: 'rule critical: criticality >= 4',
      records: 2,
      sensors: ['fw1', 'fw2'],
    },
  ]);
  assert.equal(renderFeed('json', [], NOW), '[]\n');
});

test('mikrotik: a temporary list per family filled with timeouts, then swapped in', () => {
  const lines = renderFeed('mikrotik', ITEMS, NOW).trimEnd().split('\n');
  assert.deepEqual(lines, [
    '# threatcol blocklist: /tool fetch, then /import',
    '/ip firewall address-list remove [find list=threatcol-new]',
    '/ip firewall address-list add list=threatcol-new address=192.0.2.7 timeout=1h',
    '/ip firewall address-list add list=threatcol-new address=198.51.100.0/24 timeout=1d1h1m1s',
    '/ip firewall address-list remove [find list=threatcol]',
    '/ip firewall address-list set [find list=threatcol-new] list=threatcol',
    '/ipv6 firewall address-list remove [find list=threatcol-new]',
    '/ipv6 firewall address-list add list=threatcol-new address=2001:db8:aa:bb::/64 timeout=1m',
    '/ipv6 firewall address-list remove [find list=threatcol]',
    '/ipv6 firewall address-list set [find list=threatcol-new] list=threatcol',
  ]);
  // A feed of one family leaves the router's list of the other alone (another feed may fill it).
  const v4 = ITEMS.filter((i) => i.network.family === 4);
  const only4 = renderFeed('mikrotik', v4, NOW, 'ipv4');
  assert.doesNotMatch(only4, /\/ipv6/);
  assert.equal(only4, renderFeed('mikrotik', v4, NOW).split('\n/ipv6')[0]?.concat('\n'));
  assert.doesNotMatch(renderFeed('mikrotik', [], NOW, 'ipv6'), /\/ip firewall/);
});

test('nftables: the table made again with both sets (each block with its remaining time) and drop rules', (t) => {
  const text = renderFeed('nftables', [...ITEMS, TEN_YEARS], NOW);
  assert.match(
    text,
    /elements = \{ 192\.0\.2\.7 timeout 1h,\n\s+198\.51\.100\.0\/24 timeout 1d1h1m1s,\n\s+203\.0\.113\.9 timeout 3650d \}/,
  );
  assert.match(text, /elements = \{ 2001:db8:aa:bb::\/64 timeout 1m \}/);
  const empty = renderFeed('nftables', [], NOW);
  assert.doesNotMatch(empty, /elements/);
  if (nftCheckUnavailable) {
    t.skip(nftCheckUnavailable);
    return;
  }
  const dir = makeTempDir(t);
  for (const [name, script] of [
    ['full.nft', text],
    ['empty.nft', empty],
  ] as const) {
    const path = join(dir, name);
    writeFileSync(path, script);
    // A fresh network namespace: the check touches no table of the machine.
    const check = spawnSync('unshare', ['--net', 'nft', '-c', '-f', path], { encoding: 'utf8' });
    assert.equal(check.status, 0, `${name}: ${check.stderr}`);
  }
  // Applied twice (a firewall's timer runs it again and again), then read back.
  const path = join(dir, 'full.nft');
  const applied = spawnSync(
    'unshare',
    ['--net', 'sh', '-c', `nft -f ${path} && nft -f ${path} && nft list set inet threatcol blocked4`],
    { encoding: 'utf8' },
  );
  assert.equal(applied.status, 0, applied.stderr);
  assert.match(applied.stdout, /192\.0\.2\.7 timeout 1h/);
  assert.match(applied.stdout, /198\.51\.100\.0\/24 timeout 1d1h1m1s/);
  assert.match(applied.stdout, /203\.0\.113\.9 timeout 3650d/);
});

test('nftables: nested blocks (a /24 by hand over an address a rule blocked) become disjoint elements nft accepts, each address with its longest time', (t) => {
  const nested = [
    item('198.51.100.0/24', 7200),
    item('198.51.100.7/32', 86_400),
    item('198.51.100.9/32', 600), // inside the /24 and shorter: the /24 covers it
    item('2001:db8::/48', 3600),
    item('2001:db8:0:1::/64', 600),
    item('2001:db8:0:2::/64', 7200),
  ];
  const text = renderFeed('nftables', nested, NOW);
  const elements = (set: string) =>
    (new RegExp(`set ${set} \\{[^}]*elements = \\{ ([^}]*) \\}`).exec(text)?.[1] ?? '')
      .split(/,\s*/)
      .map((e) => e.trim());
  const four = elements('blocked4');
  assert.ok(four.includes('198.51.100.7 timeout 1d'), four.join('\n'));
  assert.ok(four.includes('198.51.100.0/30 timeout 2h') && four.includes('198.51.100.128/25 timeout 2h'));
  assert.ok(!four.some((e) => e.startsWith('198.51.100.0/24') || e.startsWith('198.51.100.9 ')));
  // Every address of the /24 once: 256 in all.
  const size = (e: string) => 2 ** (32 - Number(/\/(\d+)/.exec(e)?.[1] ?? 32));
  assert.equal(
    four.reduce((n, e) => n + size(e), 0),
    256,
  );
  const six = elements('blocked6');
  assert.ok(six.includes('2001:db8:0:2::/64 timeout 2h'), six.join('\n'));
  // The /48 cut around the /64 that outlasts it; the shorter /64 inside it is covered by 2001:db8::/63.
  assert.ok(six.includes('2001:db8::/63 timeout 1h') && six.includes('2001:db8:0:3::/64 timeout 1h'));
  const size6 = (e: string) => 2 ** (64 - Number(/\/(\d+)/.exec(e)?.[1] ?? 64));
  assert.equal(
    six.reduce((n, e) => n + size6(e), 0),
    2 ** 16,
    'every /64 of the /48 once',
  );
  // Formats whose lists take overlaps serve the blocks as they are.
  assert.equal(renderFeed('plain', nested.slice(0, 2), NOW), '198.51.100.0/24\n198.51.100.7\n');
  if (nftCheckUnavailable) {
    t.skip(nftCheckUnavailable);
    return;
  }
  const path = join(makeTempDir(t), 'nested.nft');
  writeFileSync(path, text);
  const check = spawnSync('unshare', ['--net', 'nft', '-c', '-f', path], { encoding: 'utf8' });
  assert.equal(check.status, 0, check.stderr);
});

test('every format rendered in slices (steps.ts) is the same text as rendered whole; json as JSON.stringify makes it', async () => {
  // More items than a step takes, both families: every format yields between steps.
  const many = Array.from({ length: 3 * ITEMS_PER_STEP + 5 }, (_, i) =>
    i % 7 === 0
      ? item(`2001:db8:${(i >> 8).toString(16)}:${(i & 0xff).toString(16)}::/64`, 60 + (i % 100))
      : item(`198.${18 + (i >> 16)}.${(i >> 8) & 0xff}.${i & 0xff}/32`, 60 + (i % 100), {
          reason: `rule ${i} "quoted"`,
        }),
  );
  for (const format of FEED_FORMATS) {
    // Callbacks queued behind the render: each one queues the next.
    let turns = 0;
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const sliced = await runInSlices(renderSteps(format, many, NOW), 0);
    counting = false;
    assert.equal(sliced, renderFeed(format, many, NOW), format);
    assert.ok(turns > 0, `${format}: other callbacks ran between the slices`);
  }
  const objects = many.map(({ block: b }) => ({
    address: b.address,
    until: b.until,
    rule: b.rule,
    reason: b.reason,
    records: b.records,
    sensors: b.sensors,
  }));
  assert.equal(renderFeed('json', many, NOW), `${JSON.stringify(objects)}\n`);
});

/** Random blocks of both families, any prefix, lasting from a second to 10 years (the longest `--for`). */
const blocksArb = fc
  .array(
    fc.record({
      v6: fc.boolean(),
      bytes: fc.uint8Array({ minLength: 16, maxLength: 16 }),
      prefix: fc.integer({ min: 0, max: 128 }),
      seconds: fc.integer({ min: 1, max: 3650 * 86_400 }),
    }),
    { maxLength: 40 },
  )
  .map((drawn) => {
    const byNetwork = new Map<string, FeedItem>();
    for (const d of drawn) {
      const family = d.v6 ? 6 : 4;
      const prefix = d.v6 ? Math.max(16, d.prefix) : 8 + (d.prefix % 25);
      const bytes = maskBytes(d.v6 ? d.bytes : d.bytes.subarray(0, 4), prefix);
      const address = formatNetwork({ family, prefix, bytes });
      byNetwork.set(address, item(address, d.seconds));
    }
    return [...byNetwork.values()];
  });

/** An entry as the lists of PAN-OS (EDL of type IP) and FortiGate (threat feed of type address) take it. */
function isListEntry(line: string): boolean {
  const [address, prefix, more] = line.split('/');
  if (address === undefined || more !== undefined || isIP(address) === 0) return false;
  if (prefix === undefined) return true;
  if (!/^(0|[1-9]\d*)$/.test(prefix) || Number(prefix) > (isIP(address) === 4 ? 32 : 128)) return false;
  // The network's own address: no host bits set.
  return formatNetwork(parseNetwork(line) as never) === line;
}

/** RouterOS's time: weeks, days, hours, minutes and seconds, each at most once, in that order. */
const ROUTEROS_TIME = /^(?=\d)(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?$/;
const routerOsSeconds = (time: string) => {
  const unit: Record<string, number> = { w: 604_800, d: 86_400, h: 3600, m: 60, s: 1 };
  let total = 0;
  for (const [, n, u] of time.matchAll(/(\d+)([wdhms])/g)) total += Number(n) * (unit[u as string] as number);
  return total;
};

test('property: paloalto, fortinet and plain are one list entry a line (an address, or a network by its own address), each block once, nothing else', () => {
  fc.assert(
    fc.property(blocksArb, (items) => {
      for (const format of ['paloalto', 'fortinet', 'plain'] as const) {
        const text = renderFeed(format, items, NOW);
        if (items.length === 0) {
          assert.equal(text, '');
          continue;
        }
        assert.ok(text.endsWith('\n'), 'every line ends');
        const lines = text.slice(0, -1).split('\n');
        for (const line of lines) assert.ok(isListEntry(line), `${format}: ${JSON.stringify(line)}`);
        assert.equal(new Set(lines).size, lines.length, 'no entry twice');
        assert.equal(lines.length, items.length, 'every block');
      }
    }),
  );
});

test("property: mikrotik is RouterOS commands only, each address in its family's list with a time RouterOS takes", () => {
  const fixed = [
    '# threatcol blocklist: /tool fetch, then /import',
    ...['/ip', '/ipv6'].flatMap((p) => [
      `${p} firewall address-list remove [find list=threatcol-new]`,
      `${p} firewall address-list remove [find list=threatcol]`,
      `${p} firewall address-list set [find list=threatcol-new] list=threatcol`,
    ]),
  ];
  fc.assert(
    fc.property(blocksArb, (items) => {
      const lines = renderFeed('mikrotik', items, NOW).trimEnd().split('\n');
      let adds = 0;
      for (const line of lines) {
        if (fixed.includes(line)) continue;
        const add =
          /^\/(ip|ipv6) firewall address-list add list=threatcol-new address=(\S+) timeout=(\S+)$/.exec(line);
        assert.ok(add, `not a documented command: ${line}`);
        const [, path, address, time] = add as unknown as [string, string, string, string];
        assert.ok(isListEntry(address), line);
        assert.equal(isIP(address.split('/')[0] as string), path === 'ip' ? 4 : 6, `family: ${line}`);
        assert.match(time, ROUTEROS_TIME, line);
        assert.ok(routerOsSeconds(time) >= 1 && routerOsSeconds(time) <= ROUTEROS_MAX_SECONDS, line);
        adds++;
      }
      assert.equal(adds, items.length);
    }),
  );
});
