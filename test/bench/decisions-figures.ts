// Blocklist figures, run by hand (`node --import tsx test/bench/decisions-figures.ts [records]`): the decisions
// engine's throughput on distinct records (records per engine CPU-second, reading the files backend's log as
// it does at start, and the heap it then holds), and rendering a 100,000-entry feed in each format (time and
// heap). With --expose-gc for the heap figures.
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { startDecisionEngine } from '../../src/decisions/engine.js';
import { parseNetwork } from '../../src/decisions/networks.js';
import { type FeedItem, renderFeed } from '../../src/decisions/render-feed.js';
import { newRecordId } from '../../src/records/record-id.js';
import { FEED_FORMATS } from '../../src/store/decisions.js';
import { openStore } from '../../src/store/open-store.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { record } from '../store/contract.js';

const total = Number(process.argv[2] ?? 200_000);
const dataDir = makeTempDir();
const { config } = loadConfig({
  env: {},
  defaultConfigPath: '/nonexistent',
  overrides: {
    dataDir,
    'dedupe.windowSeconds': 0,
    'blocklist.rules': {
      critical: { minCriticality: 4, duration: '24h' },
      spreading: { minCriticality: 2, minSensors: 2, within: '1h', duration: '6h' },
    },
  },
});
const logger = pino({ level: 'silent' });
const store = await openStore(config, { dataDir, logger });
const log = await store.openRecordLog();
const started = Date.now() - 1_800_000;
for (let i = 0; i < total; i += 1000) {
  const batch = [];
  for (let j = i; j < Math.min(total, i + 1000); j++) {
    const at = started + j;
    // Distinct public sources (one record each), a tenth critical, the rest spread over two sensors.
    const src = `${11 + ((j >> 16) & 0x3f)}.${(j >> 8) & 0xff}.${j & 0xff}.${1 + (j % 250)}`;
    batch.push(
      record({
        id: newRecordId(at),
        received_at: new Date(at).toISOString(),
        src_ip: src,
        criticality: j % 10 === 0 ? 4 : 2,
        sensor: j % 2 === 0 ? 'fw1' : 'fw2',
      }),
    );
  }
  await log.append(batch);
}
await log.close();

// The engine reads the last hour again at start: that is its whole work here.
const cpu = process.cpuUsage();
const wall = performance.now();
const lines: Record<string, unknown>[] = [];
const engine = startDecisionEngine({
  store,
  blocklist: config.blocklist,
  logger: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) }),
});
while (!lines.some((l) => String(l.msg).startsWith("the rules' windows")))
  await new Promise((r) => setTimeout(r, 5));
const used = process.cpuUsage(cpu);
const seconds = (used.user + used.system) / 1e6;
const counts = engine.counts();
global.gc?.();
const heapMiB = process.memoryUsage().heapUsed / 1048576;
await engine.stop();
await store.close();
console.log(
  `engine: ${total} distinct records in ${Math.round(performance.now() - wall)} ms wall, ${seconds.toFixed(2)} CPU-s: ${Math.round(total / seconds)} records per CPU-second (tracked ${counts.tracked}, blocks made ${JSON.stringify(counts.blocksMade)}; heap with them ${heapMiB.toFixed(0)} MiB)`,
);

const now = Date.now();
const items: FeedItem[] = [];
for (let i = 0; i < 100_000; i++) {
  const address =
    i % 4 === 0
      ? `2001:db8:${(i >> 8).toString(16)}:${(i & 0xff).toString(16)}::/64`
      : `198.18.${(i >> 8) & 0xff}.${i & 0xff}/32`;
  items.push({
    network: parseNetwork(address) as FeedItem['network'],
    block: {
      address,
      rule: 'critical',
      reason: 'rule critical: criticality >= 4',
      since: new Date(now).toISOString(),
      until: new Date(now + 86_400_000).toISOString(),
      criticality: 4,
      records: 1,
      sensors: ['fw1'],
      who: null,
    },
  });
}
for (const format of FEED_FORMATS) {
  global.gc?.();
  const heap = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const body = renderFeed(format, items, now);
  const ms = performance.now() - t0;
  const grown = process.memoryUsage().heapUsed - heap;
  console.log(
    `render ${format}: 100000 entries, ${(Buffer.byteLength(body) / 1048576).toFixed(1)} MiB in ${ms.toFixed(0)} ms, heap +${(grown / 1048576).toFixed(0)} MiB`,
  );
}
