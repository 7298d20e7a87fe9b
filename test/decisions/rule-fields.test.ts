// Each field of a blocklist rule, end to end through the real binary: `threatcol serve` with the rules in its
// configuration file, sensors added with `sensor add`, records posted over real TLS, the blocks read back with
// `block list --json --all`, a block removed with `block remove`. minCriticality, minRecords, minSensors
// (distinct), within, duration from the last record, sensors, endpoints, threat (substring, any case), address;
// the units (ipv4Prefix, ipv6Prefix, IPv4-mapped IPv6 as IPv4, NAT64); repeatFactor capped by maxDuration;
// blockPrivate; maxTracked. Uses dist/ (npm run build).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { request } from 'undici';
import { addSensorCli, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const GUARD_MS = 15_000;
const HOUR = 3_600_000;

/** A block as `block list --json` prints it. */
interface Block {
  address: string;
  rule: string;
  since: string;
  until: string;
  records: number;
  sensors: string[];
}

/** `threatcol serve` with `blocklist` in its configuration file, and the CLI beside it on the same data. */
async function collector(t: { after(fn: () => unknown): void }, blocklist: Record<string, unknown>) {
  const dataDir = makeTempDir(t);
  const config = join(dataDir, 'config.json');
  writeFileSync(config, JSON.stringify({ blocklist, registry: { pollIntervalMs: 100 } }));
  const serve: ServeProcess = await spawnServe(dataDir, ['--config', config]);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const cli = async (...args: string[]) => {
    const r = await runCli([...args, '--data-dir', dataDir, '--config', config]);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  return {
    serve,
    async addSensor(name: string) {
      const key = await addSensorCli(dataDir, name, ['--config', config]);
      // Taken within the registry's poll: a record no rule matches, posted until it is.
      await until(
        async () =>
          (
            await post(
              serve.url,
              '/generic',
              [genericRecord({ source_ip: '192.0.2.250', criticality: 0, threat: 'noop' })],
              {
                sensor: name,
                key,
                agent,
              },
            )
          ).status === 200,
        GUARD_MS,
        `sensor ${name} taken`,
        50,
      );
      return key;
    },
    async send(sensor: string, key: string, records: Record<string, unknown>[]) {
      const reply = await post(serve.url, '/generic', records, { sensor, key, agent });
      assert.equal(reply.status, 200, reply.text);
    },
    async blocks(): Promise<ReadonlyMap<string, Block>> {
      const listed = JSON.parse(await cli('block', 'list', '--json', '--all')) as Block[];
      return new Map(listed.map((b) => [b.address, b]));
    },
    removeBlock: (unit: string) => cli('block', 'remove', unit),
  };
}

type Collector = Awaited<ReturnType<typeof collector>>;

async function untilBlocked(server: Collector, unit: string, check: (b: Block) => boolean = () => true) {
  let found: Block | undefined;
  try {
    await until(
      async () => {
        found = (await server.blocks()).get(unit);
        return found !== undefined && check(found);
      },
      GUARD_MS,
      `a block of ${unit}`,
    );
  } catch (error) {
    // What the engine said (its thread's lines), and the block as listed.
    const engine = server.serve.logs.filter((l) => l.thread === 'decisions').slice(-30);
    throw new Error(
      `${(error as Error).message}; listed: ${JSON.stringify(found ?? null)}; the engine's last lines: ${JSON.stringify(engine)}`,
    );
  }
  return found as Block;
}

const lasts = (b: Block) => Date.parse(b.until) - Date.parse(b.since);

test('rule fields: each threshold and filter, the units, duration from the last record, repeats capped by maxDuration', async (t) => {
  const server = await collector(t, {
    ipv4Prefix: 24,
    ipv6Prefix: 48,
    repeatFactor: 100,
    maxDuration: '3h',
    rules: {
      few: { minCriticality: 3, minRecords: 3, duration: '10s', threat: 'few' },
      pair: { minSensors: 2, duration: '1h', threat: 'pair' },
      window: { minRecords: 2, within: '1s', duration: '1h', threat: 'window' },
      fromFw2: { sensors: ['fw2'], threat: 'BrUtE', duration: '2h' },
      firewallOnly: { endpoints: ['firewall'], threat: 'fwonly', duration: '1h' },
      exfil: { address: 'destination', threat: 'exfil', duration: '4h' },
      short: { threat: 'short', duration: '2s' },
      critical: { minCriticality: 4, duration: '5h' },
    },
  });
  const fw1 = await server.addSensor('fw1');
  const fw2 = await server.addSensor('fw2');
  const rec = (source_ip: string, threat: string, criticality = 3, extra: Record<string, unknown> = {}) =>
    genericRecord({ source_ip, threat, criticality, destination_ip: '192.0.2.1', ...extra });

  await server.send('fw1', fw1, [
    rec('198.51.1.1', 'few', 3),
    rec('198.51.1.2', 'few', 3), // two records: below minRecords
    rec('198.51.2.1', 'few', 2),
    rec('198.51.2.2', 'few', 2),
    rec('198.51.2.3', 'few', 2), // below minCriticality
    rec('198.51.3.5', 'FEW', 3),
    rec('198.51.3.6', 'few', 3),
    rec('198.51.3.7', 'a few', 3), // three records of one /24 unit
    rec('198.51.10.1', 'pair'),
    rec('198.51.10.1', 'pair'), // one sensor twice: not two sensors
    rec('198.51.11.1', 'pair'),
    rec('198.51.4.1', 'SSH brute force', 1), // not from fw2
    rec('198.51.6.1', 'fwonly'), // in at /generic, not /firewall
    rec('198.51.7.1', 'Exfiltration', 0, { destination_ip: '198.51.8.9' }),
    rec('::ffff:198.51.9.77', 'anything', 4),
    rec('2001:db8:1:2::5', 'anything', 4),
    rec('64:ff9b::198.51.14.1', 'anything', 4), // NAT64: the IPv4 address's /24, not 64:ff9b::/48
    rec('198.51.12.1', 'window'),
  ]);
  await server.send('fw2', fw2, [rec('198.51.11.1', 'pair'), rec('198.51.5.1', 'ssh BRUTE force', 1)]);
  await untilBlocked(server, '198.51.11.0/24');
  const made = await server.blocks();
  assert.deepEqual([...made.keys()].sort(), [
    '198.51.11.0/24',
    '198.51.3.0/24',
    '198.51.5.0/24',
    '198.51.8.0/24',
    '198.51.9.0/24',
    '2001:db8:1::/48',
    '64:ff9b::c633:e00/120',
  ]);
  const few = made.get('198.51.3.0/24') as Block;
  assert.equal(few.rule, 'few');
  assert.equal(few.records, 3);
  assert.equal(lasts(few), 10_000);
  assert.deepEqual(made.get('198.51.11.0/24')?.sensors, ['fw1', 'fw2']);
  // Each sensor named sent a record in the window: two, though minRecords is 1.
  assert.equal(made.get('198.51.11.0/24')?.records, 2);
  assert.equal(made.get('198.51.5.0/24')?.rule, 'fromFw2');
  assert.equal(made.get('198.51.8.0/24')?.rule, 'exfil');
  // maxDuration caps a rule's duration too: 4h and 5h rules make 3h blocks.
  assert.equal(lasts(made.get('198.51.8.0/24') as Block), 3 * HOUR);
  assert.equal(lasts(made.get('2001:db8:1::/48') as Block), 3 * HOUR);

  // A further record extends the block: it lasts `duration` from the last one.
  await new Promise((resolve) => setTimeout(resolve, 600));
  const sent = Date.now();
  await server.send('fw1', fw1, [rec('198.51.3.9', 'few', 3)]);
  const extended = await untilBlocked(server, '198.51.3.0/24', (b) => b.until !== few.until);
  assert.ok(Math.abs(Date.parse(extended.until) - (sent + 10_000)) < 1000, `extended to ${extended.until}`);
  assert.equal(extended.since, few.since);

  // The window: a second record more than `within` after the first makes no block; one within it does.
  await new Promise((resolve) => setTimeout(resolve, 1300));
  await server.send('fw1', fw1, [rec('198.51.12.2', 'window')]);
  await server.send('fw1', fw1, [rec('198.51.99.1', 'sentinel', 4)]);
  await untilBlocked(server, '198.51.99.0/24');
  assert.equal((await server.blocks()).has('198.51.12.0/24'), false, 'records 1.3 s apart, within 1s');
  await server.send('fw1', fw1, [rec('198.51.12.3', 'window')]);
  await untilBlocked(server, '198.51.12.0/24');

  // Repeats: 2 s, then 100x (200 s), then 100x again, capped at maxDuration (3h).
  await server.send('fw1', fw1, [rec('198.51.13.1', 'short')]);
  const first = await untilBlocked(server, '198.51.13.0/24');
  assert.equal(lasts(first), 2000);
  await until(async () => Date.parse(first.until) < Date.now(), GUARD_MS, 'the first block to end');
  await server.send('fw1', fw1, [rec('198.51.13.1', 'short')]);
  const second = await untilBlocked(server, '198.51.13.0/24', (b) => b.since !== first.since);
  assert.equal(lasts(second), 200_000);
  await server.removeBlock('198.51.13.0/24');
  await new Promise((resolve) => setTimeout(resolve, 50));
  await server.send('fw1', fw1, [rec('198.51.13.1', 'short')]);
  const third = await untilBlocked(server, '198.51.13.0/24', (b) => b.since !== second.since);
  assert.equal(lasts(third), 3 * HOUR);
});

test('blockPrivate: private, unique-local and shared addresses are blocked too; without it, never', async (t) => {
  for (const blockPrivate of [true, false]) {
    const server = await collector(t, {
      blockPrivate,
      rules: { critical: { minCriticality: 4, duration: '1h' } },
    });
    const key = await server.addSensor('fw1');
    await server.send('fw1', key, [
      genericRecord({ source_ip: '10.1.2.3', criticality: 4 }),
      genericRecord({ source_ip: '::ffff:192.168.1.1', criticality: 4 }),
      genericRecord({ source_ip: 'fd00::1', criticality: 4 }),
      genericRecord({ source_ip: '100.64.0.9', criticality: 4 }),
      genericRecord({ source_ip: '198.51.100.1', criticality: 4 }),
    ]);
    await untilBlocked(server, '198.51.100.1/32');
    assert.deepEqual(
      [...(await server.blocks()).keys()].sort(),
      blockPrivate
        ? ['10.1.2.3/32', '100.64.0.9/32', '192.168.1.1/32', '198.51.100.1/32', 'fd00::/64']
        : ['198.51.100.1/32'],
    );
    assert.equal((await server.serve.stop()).code, 0);
  }
});

test('maxTracked: past it, the least recently seen address leaves (its count starts again) and the drop is counted in /metrics', async (t) => {
  const server = await collector(t, {
    maxTracked: 1000,
    rules: { thrice: { minRecords: 3, duration: '1h', threat: 'count' } },
  });
  const key = await server.addSensor('fw1');
  const address = (i: number) => `198.18.${Math.floor(i / 250)}.${(i % 250) + 1}`;
  const sendRange = async (from: number, to: number) => {
    for (let i = from; i < to; i += 250) {
      const batch = [];
      for (let j = i; j < Math.min(to, i + 250); j++) batch.push(rec(address(j)));
      await server.send('fw1', key, batch);
    }
  };
  const rec = (source_ip: string) => genericRecord({ source_ip, threat: 'count', criticality: 1 });
  await sendRange(0, 1000);
  // The first address seen again: the most recent now (a second record: minRecords is 3).
  await server.send('fw1', key, [rec(address(0))]);
  await sendRange(1000, 1100); // 100 new addresses: the 100 least recently seen (1-100) leave, not 0
  await server.send('fw1', key, [
    rec(address(0)), // its third record: kept, so blocked
    rec(address(101)),
    rec(address(101)), // kept: three records
    rec(address(1)),
    rec(address(1)), // dropped: its count started again at two (and 102 left for it)
    rec(address(1099)),
    rec(address(1099)),
  ]);
  await untilBlocked(server, `${address(1099)}/32`);
  const made = await server.blocks();
  assert.equal(made.has(`${address(0)}/32`), true, 'address 0, seen again, was kept');
  assert.equal(made.has(`${address(101)}/32`), true, 'address 101 was kept');
  assert.equal(made.has(`${address(1)}/32`), false, 'address 1 was dropped: counted anew');
  let text = '';
  await until(
    async () => {
      text = await (await request(`${server.serve.adminUrl}/metrics`)).body.text();
      return /^threatcol_decisions_dropped_addresses_total 101$/m.test(text);
    },
    GUARD_MS,
    'the drops in /metrics',
  );
  assert.match(text, /^threatcol_decisions_tracked_addresses 1000$/m);
});
