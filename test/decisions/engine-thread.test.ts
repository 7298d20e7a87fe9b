// Where the decisions engine runs (docs/blocklists.md, "Cost"): in a thread of serve's own at nice +5, never on
// the thread that takes records. Read from /proc as `top -H` shows it: while the engine reads a backlog of
// records (its cursor moved back as `outputs replay` does), serve's main thread spends a small part of the CPU
// the process spends. Uses dist/ (npm run build).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { pino } from 'pino';
import type { Agent } from 'undici';
import { loadConfig } from '../../src/config/load-config.js';
import { ENGINE_NICE } from '../../src/decisions/box-engine.js';
import { DECISIONS_CURSOR } from '../../src/store/decisions.js';
import { openStore } from '../../src/store/open-store.js';
import { addSensorCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord, type RecordSpec, recordsFromSpecs, writeDaySegments } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

/** Enough records for about a second of the engine's CPU (~50,000 a CPU-second). */
const RECORDS = 60_000;
/** Hang guard for the engine to read them (a second or two on a quiet box). */
const GUARD_MS = 120_000;

/** utime + stime of one thread of `pid` (`tid` = `pid`: its main thread), or of the whole process, in ticks. */
function cpuTicks(pid: number, tid?: number | string): number {
  const stat = readFileSync(
    tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`,
    'utf8',
  );
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const niceOf = (pid: number, tid: number | string): number => {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
};

/** How many threads of `pid` run ENGINE_NICE levels below its main thread. */
const lowered = (pid: number): number =>
  readdirSync(`/proc/${pid}/task`).filter((tid) => niceOf(pid, tid) === niceOf(pid, pid) + ENGINE_NICE)
    .length;

/** Posts a record of sensor fw1 until serve takes it (it reads the new sensor within its poll); the agent. */
async function firstRecord(
  t: TestContext,
  serve: ServeProcess,
  dataDir: string,
  key: string,
): Promise<Agent> {
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  await until(
    async () =>
      (await post(serve.url, '/generic', [genericRecord()], { sensor: 'fw1', key, agent })).status === 200,
    GUARD_MS,
    'a record is taken',
    100,
  );
  return agent;
}

const BLOCKLIST = {
  rules: {
    critical: { minCriticality: 4, duration: '24h' },
    spreading: { minCriticality: 2, minSensors: 2, within: '1h', duration: '6h' },
  },
};

test('the engine reads its records in a thread of its own at a lower priority (nice +5): the main thread that takes records stays idle', async (t) => {
  const dataDir = makeTempDir(t);
  // Two hours old: out of the rules' windows, so only the engine's cursor, moved back below, reads them. One
  // sensor, criticality 2: counted by `spreading` (tracked), never blocked (it wants two sensors).
  const specs: RecordSpec[] = Array.from({ length: RECORDS }, (_, i) => ({
    ageMinutes: 120,
    src: `${11 + (i >> 16)}.${(i >> 8) & 0xff}.${i & 0xff}.1`,
    dst: '198.51.100.2',
    threat: 'ET SCAN Suspicious inbound',
    sensor: 'fw1',
    criticality: 2,
  }));
  const records = recordsFromSpecs(specs, Date.now());
  writeDaySegments(dataDir, records);
  const configPath = join(dataDir, 'config.json');
  writeFileSync(configPath, JSON.stringify({ blocklist: BLOCKLIST, registry: { pollIntervalMs: 100 } }));
  const serve = await spawnServe(dataDir, ['--config', configPath]);
  const key = await addSensorCli(dataDir, 'fw1');
  t.after(() => serve.stop('SIGKILL'));
  const pid = serve.child.pid as number;
  await until(
    () => serve.logs.some((l) => String(l.msg).startsWith("the rules' windows read again")),
    GUARD_MS,
    'the engine reads its feed',
  );
  const { config } = loadConfig({ env: {}, defaultConfigPath: '/nonexistent', overrides: { dataDir } });
  const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  const main0 = cpuTicks(pid, pid);
  const all0 = cpuTicks(pid);
  await store.outputs.replay(DECISIONS_CURSOR, Date.parse(records[0]?.received_at as string) - 1);
  await store.close();
  // The engine takes the moved cursor after its next record (a waiting feed reads on from where it is).
  await firstRecord(t, serve, dataDir, key);
  const tracked = async () => {
    const text = await (await fetch(`${serve.adminUrl}/metrics`)).text();
    return Number(/^threatcol_decisions_tracked_addresses (\d+)$/m.exec(text)?.[1] ?? 0);
  };
  await until(async () => (await tracked()) >= RECORDS, GUARD_MS, 'the engine reads the records', 250);
  const main = cpuTicks(pid, pid) - main0;
  const all = cpuTicks(pid) - all0;
  t.diagnostic(`main thread ${main} of ${all} ticks while the engine read ${RECORDS} records`);
  assert.ok(all >= 20, `the engine's reading shows in the process's CPU (${all} ticks)`);
  assert.ok(main < all * 0.3, `the main thread took ${main} of ${all} ticks`);
  assert.equal(lowered(pid), 1, `one thread at nice +${ENGINE_NICE} runs the engine`);
  assert.ok(
    serve.logs.some((l) => l.thread === 'decisions' && l.part === 'decisions'),
    "the engine's thread logs through serve's log, with its fields",
  );
});

test('without a rule no engine thread runs; a reload that adds one starts it, and its blocks are counted', async (t) => {
  const dataDir = makeTempDir(t);
  const configPath = join(dataDir, 'config.json');
  writeFileSync(configPath, JSON.stringify({ registry: { pollIntervalMs: 100 } }));
  const serve = await spawnServe(dataDir, ['--config', configPath]);
  t.after(() => serve.stop('SIGKILL'));
  const pid = serve.child.pid as number;
  const key = await addSensorCli(dataDir, 'fw1');
  const agent = await firstRecord(t, serve, dataDir, key);
  assert.equal(lowered(pid), 0, 'no rule, no engine thread');

  writeFileSync(configPath, JSON.stringify({ blocklist: BLOCKLIST, registry: { pollIntervalMs: 100 } }));
  serve.child.kill('SIGHUP');
  await until(() => lowered(pid) === 1, GUARD_MS, 'the engine thread starts with the first rule');
  const record = genericRecord({ source_ip: '198.51.100.61', criticality: 4 });
  const made = async () => {
    const text = await (await fetch(`${serve.adminUrl}/metrics`)).text();
    return (
      /^threatcol_blocks_made_total\{rule="critical"\} 1$/m.test(text) &&
      /^threatcol_blocks_active 1$/m.test(text)
    );
  };
  // Counted by the engine's feed, or by its scan of the window at start if it posted before the thread read.
  assert.equal((await post(serve.url, '/generic', [record], { sensor: 'fw1', key, agent })).status, 200);
  await until(made, GUARD_MS, 'the block is made and counted', 100);
});
