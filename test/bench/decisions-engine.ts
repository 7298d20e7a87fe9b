// One measure of the decisions engine, in a process of its own (a clean heap; the CPU counted is the engine's
// alone): `node --import tsx test/bench/decisions-engine.ts [--src ROOT] [--path feed|scan] [--records N]`.
// Stores N distinct records (distinct public sources, a tenth critical, the rest over two sensors, a firewall's
// original each), then times the engine over them: `feed` (the default), as it reads records arriving while it
// runs (its durable cursor placed before them: the scan at start finds none in its window); `scan`, as it reads
// the window again at start. --src: another checkout's root (before/after in one run, figures-decisions.ts).
// --profile FILE: a CPU profile of the engine's part alone (not the records' storing), for profile-summary.ts.
// --no-blocks: the same rules, each wanting two records about an address (every source here has one): the same
// counting and none of the blocks' writing, the difference being what the blocks cost.
// Prints one JSON line: records, cpuSeconds (the engine's whole run), pageFaults (minor, the whole run),
// startCpuSeconds (its start: the decisions read and the records' window scanned again, up to its log line saying
// so), wallMs, tracked, blocksMade, heapMiB.
// On `feed`, what follows the start is its throughput: the records read from its cursor.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { argValue } from './argv.js';
import { firewallRecord } from './payloads.js';

const root = resolve(argValue('--src') ?? join(import.meta.dirname, '../..'));
const path = argValue('--path') ?? 'feed';
const total = Number(argValue('--records') ?? 100_000);
const profile = argValue('--profile');
const noBlocks = process.argv.includes('--no-blocks');
const from = (file: string) => import(join(root, file));
const { loadConfig } = await from('src/config/load-config.ts');
const { startDecisionEngine } = await from('src/decisions/engine.ts');
const { newRecordId } = await from('src/records/record-id.ts');
const { DECISIONS_CURSOR } = await from('src/store/decisions.ts');
const { openStore } = await from('src/store/open-store.ts');

const dataDir = mkdtempSync(join(tmpdir(), 'threatcol-decisions-bench-'));
try {
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent',
    overrides: {
      dataDir,
      'dedupe.windowSeconds': 0,
      'blocklist.rules': {
        critical: { minCriticality: 4, duration: '24h', ...(noBlocks ? { minRecords: 2 } : {}) },
        spreading: {
          minCriticality: 2,
          minSensors: 2,
          within: '1h',
          duration: '6h',
          ...(noBlocks ? { minRecords: 2 } : {}),
        },
      },
    },
  });
  const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  const log = await store.openRecordLog();
  // feed: received two hours ago, out of the longest window (1 h): only the cursor reads them.
  const started = Date.now() - (path === 'feed' ? 7_200_000 : 1_800_000);
  const original = firewallRecord();
  for (let i = 0; i < total; i += 1000) {
    const batch = [];
    for (let j = i; j < Math.min(total, i + 1000); j++) {
      const at = started + j;
      const src = `${11 + ((j >> 16) & 0x3f)}.${(j >> 8) & 0xff}.${j & 0xff}.${1 + (j % 250)}`;
      batch.push({
        id: newRecordId(at),
        received_at: new Date(at).toISOString(),
        sensor: j % 2 === 0 ? 'fw1' : 'fw2',
        endpoint: 'firewall',
        criticality: j % 10 === 0 ? 4 : 2,
        severity: j % 10 === 0 ? 'critical' : 'medium',
        criticality_source: 'sender',
        src_ip: src,
        dst_ip: '198.51.100.2',
        src_port: 40_000 + (j % 20_000),
        dst_port: 443,
        protocol: 'tcp',
        threat: 'ET SCAN Suspicious inbound',
        remote_addr: '127.0.0.1',
        original: { ...original, src },
      });
    }
    await log.append(batch);
  }
  await log.close();
  if (path === 'feed') await store.outputs.replay(DECISIONS_CURSOR, started - 1);

  const session = profile ? new Session() : null;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const faults0 = process.resourceUsage().minorPageFault;
  const cpu = process.cpuUsage();
  const wall = performance.now();
  const lines: Record<string, unknown>[] = [];
  const seconds = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;
  // Taken as the scan's log line is written (synchronously: the feed is opened after it).
  let startCpuSeconds: number | null = null;
  const engine = startDecisionEngine({
    store,
    blocklist: config.blocklist,
    logger: pino(
      { level: 'info' },
      {
        write: (line: string) => {
          const entry = JSON.parse(line) as Record<string, unknown>;
          if (startCpuSeconds === null && String(entry.msg).startsWith("the rules' windows"))
            startCpuSeconds = seconds(process.cpuUsage(cpu));
          lines.push(entry);
        },
      },
    ),
  });
  const done =
    path === 'feed'
      ? () => engine.counts().tracked >= total
      : () => lines.some((l) => String(l.msg).startsWith("the rules' windows"));
  const guard = Date.now() + 600_000;
  while (!done() && Date.now() < guard) await new Promise((r) => setTimeout(r, 5));
  const counts = engine.counts();
  // Stopping waits for the batch in hand (its blocks written, its cursor moved): part of the work.
  await engine.stop();
  const used = process.cpuUsage(cpu);
  if (startCpuSeconds === null)
    throw new Error("the engine never logged the end of its start (the rules' windows)");
  const pageFaults = process.resourceUsage().minorPageFault - faults0;
  const wallMs = performance.now() - wall;
  if (session && profile) {
    const { profile: taken } = await session.post('Profiler.stop');
    writeFileSync(profile, JSON.stringify(taken));
    session.disconnect();
  }
  global.gc?.();
  const heapMiB = process.memoryUsage().heapUsed / 1048576;
  await store.close();
  process.stdout.write(
    `${JSON.stringify({ path, records: total, cpuSeconds: seconds(used), pageFaults, startCpuSeconds, wallMs, tracked: counts.tracked, blocksMade: counts.blocksMade, heapMiB })}\n`,
  );
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
