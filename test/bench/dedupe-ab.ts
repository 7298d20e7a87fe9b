// What deduplication costs on the hot path: threatcol with dedupe on (the default, 120 s) against dedupe off,
// same binary, alternated A B A B, one distinct firewall record per request (no duplicates: the full cost of
// key, lookup and stored key, none of the savings), plus the window rebuild at restart.
// Run: npm run build && flock /tmp/threatcol-bench.lock node --import tsx test/bench/dedupe-ab.ts
// (AB_WORKERS=2 for `serve --workers 2`: the keys are then claimed in the primary's window over IPC).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { newRecordId } from '../../src/records/record-id.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { openStore } from '../../src/store/open-store.js';
import { firewallRecord } from './payloads.js';
import { detectPinning, keepAliveFirewallLoad, startThreatcol, type ThreatcolServer } from './processes.js';
import { median } from './report.js';

const SECONDS = Number(process.env.AB_SECONDS ?? 5);
const PAIRS = Number(process.env.AB_PAIRS ?? 3);
const CONNECTIONS = 16;
const WORKERS = Number(process.env.AB_WORKERS ?? 1);
const pin = detectPinning();
const base = firewallRecord();
let serial = 0;

/** A distinct record per request: the source port and address walk through their ranges. */
function nextBody(): string {
  serial += 1;
  return JSON.stringify({ ...base, sport: serial % 65_536, src: `10.${(serial >> 16) & 255}.0.1` });
}

async function load(server: ThreatcolServer): Promise<{ rps: number; cpuMsPerRequest: number }> {
  const r = await keepAliveFirewallLoad(server, {
    connections: CONNECTIONS,
    seconds: SECONDS,
    nextBody,
    // A duplicate answer means the window took a retry for a new record: what this A/B must never measure.
    refuse: (text) => text.includes('duplicates'),
  });
  return { rps: r.rps, cpuMsPerRequest: r.cpuSecondsPerRequest * 1000 };
}

/** Stores `count` keyed records (~700 bytes each) and times the window's rebuild when a writer opens again. */
async function rebuildTime(count: number): Promise<{ keys: number; ms: number; bytes: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'threatcol-rebuild-'));
  try {
    const { config } = loadConfig({ env: {}, defaultConfigPath: '/nonexistent', overrides: { dataDir } });
    const silent = pino({ level: 'silent' });
    const writer = await (await openStore(config, { dataDir, logger: silent })).openRecordLog();
    const at = new Date().toISOString();
    let bytes = 0;
    for (let done = 0; done < count; done += 1000) {
      const records: StoredRecord[] = [];
      const keys: string[] = [];
      for (let i = done; i < done + 1000; i++) {
        const original = { ...base, sport: i % 65_536, src: `10.${(i >> 16) & 255}.0.1` };
        const record = {
          id: newRecordId(),
          received_at: at,
          sensor: 'bench',
          endpoint: 'firewall',
          criticality: 4,
          severity: 'critical',
          criticality_source: 'severity',
          src_ip: original.src,
          dst_ip: '198.51.100.20',
          src_port: original.sport,
          dst_port: 445,
          protocol: 'tcp',
          threat: 'SMBv3',
          threat_id: '91234',
          detected_at: at,
          remote_addr: '127.0.0.1',
          original,
        } satisfies StoredRecord;
        bytes += JSON.stringify(record).length + 40;
        records.push(record);
        keys.push(`k${String(i).padStart(21, '0')}`);
      }
      await writer.append(records, { dedupeKeys: keys });
    }
    await writer.close();
    let rebuilt = { keys: 0, ms: 0 };
    const capture = pino(
      { level: 'info' },
      {
        write(line: string) {
          const entry = JSON.parse(line) as { msg: string; keys: number; ms: number };
          if (entry.msg.startsWith('dedupe window rebuilt')) rebuilt = { keys: entry.keys, ms: entry.ms };
        },
      },
    );
    const again = await (await openStore(config, { dataDir, logger: capture })).openRecordLog();
    await again.close();
    return { ...rebuilt, bytes };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const dirs = {
  on: mkdtempSync(join(tmpdir(), 'threatcol-ab-on-')),
  off: mkdtempSync(join(tmpdir(), 'threatcol-ab-off-')),
};
const start = (which: 'on' | 'off') =>
  startThreatcol(`dedupe-${which}`, dirs[which], pin, {
    env: { THREATCOL_DEDUPE_WINDOW_SECONDS: which === 'on' ? (process.env.AB_WINDOW ?? '120') : '0' },
    // AB_WORKERS=N: `serve --workers N`, where each keyed request claims its keys in the primary (IPC).
    ...(WORKERS > 1 ? { args: ['--workers', String(WORKERS)] } : {}),
  });
const results: Record<'on' | 'off', { rps: number; cpuMsPerRequest: number }[]> = { on: [], off: [] };
try {
  const servers = { on: await start('on'), off: await start('off') };
  await load(servers.on); // warm-up, both
  await load(servers.off);
  for (let i = 0; i < PAIRS; i++) {
    for (const which of ['on', 'off'] as const) results[which].push(await load(servers[which]));
  }
  await servers.on.stop();
  await servers.off.stop();
  const rebuild = await rebuildTime(Number(process.env.AB_REBUILD_RECORDS ?? 200_000));
  const row = (which: 'on' | 'off') => ({
    rps: Math.round(median(results[which].map((r) => r.rps))),
    cpuMsPerRequest: Number(median(results[which].map((r) => r.cpuMsPerRequest)).toFixed(3)),
  });
  const on = row('on');
  const off = row('off');
  process.stdout.write(
    `${JSON.stringify(
      {
        pin: pin.reason,
        workers: WORKERS,
        secondsPerRun: SECONDS,
        pairs: PAIRS,
        connections: CONNECTIONS,
        dedupeOff: off,
        dedupeOn: on,
        rpsRatioOnToOff: Number((on.rps / off.rps).toFixed(3)),
        cpuRatioOnToOff: Number((on.cpuMsPerRequest / off.cpuMsPerRequest).toFixed(3)),
        requestsSent: serial,
        rebuild,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  rmSync(dirs.on, { recursive: true, force: true });
  rmSync(dirs.off, { recursive: true, force: true });
}
