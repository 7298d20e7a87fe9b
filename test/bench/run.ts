// `npm run bench [-- --quick]`: threatcol against a bare node:https reference on the same box, same TLS,
// same certificate, alternated A B A B; prints the table and writes test/bench/results/*.json.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { NATS_SERVER } from '../helpers/nats-server.js';
import { lookUpFigure } from './figure-look-up.js';
import { decisionsRows } from './figures-decisions.js';
import { dedupeRows } from './figures-dedupe.js';
import { enrichRows } from './figures-enrich.js';
import {
  againstBound,
  type BenchContext,
  batched,
  keepAlive,
  newConnection,
  outsiderMeasure,
  storeSize,
  warmUp,
} from './figures-load.js';
import {
  type Cleanups,
  type NatsBackend,
  natsDataDir,
  natsRows,
  runCleanups,
  startNatsBackend,
} from './figures-nats.js';
import { memoryRows, memoryUnderLoad, storeFootprint } from './figures-other.js';
import { forwardingRows, outputIngestRows } from './figures-outputs.js';
import { runtimeFigure } from './figures-runtime.js';
import { cliStartup } from './figures-startup.js';
import { syslogRows } from './figures-syslog.js';
import { LoadWorker, standardWorkload } from './load.js';
import { prefillStore } from './prefill.js';
import {
  BIN,
  detectPinning,
  ROOT,
  type ServerUnderTest,
  startBound,
  startContractBound,
  startReference,
  startThreatcol,
  type ThreatcolServer,
  zonedSensor,
} from './processes.js';
import { fmt, markdownTable, median, type Row, textTable, writeResults } from './report.js';

const quick = process.argv.includes('--quick');
const keep = process.argv.includes('--keep');
const started = performance.now();
const log = (message: string) =>
  process.stdout.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);

const pin = detectPinning();
const machine = {
  nproc: cpus().length,
  cpu:
    /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ??
    cpus()[0]?.model ??
    'unknown',
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  pinning: pin.reason,
};
// commander answers --help of an unknown command with the top-level help: look for the command's own usage line.
const has = (args: string[]) =>
  spawnSync(process.execPath, [BIN, ...args, '--help'], { encoding: 'utf8' }).stdout.includes(
    `Usage: threatcol ${args.join(' ')}`,
  );
const sendAvailable = has(['send']);
const tailAvailable = has(['threats', 'tail']);
log(
  `threatcol bench${quick ? ' --quick' : ''}: ${machine.nproc} x ${machine.cpu}, Node ${machine.node}, ${pin.reason}`,
);
log('every request carries records not sent before (test/bench/payloads.ts): the rows measure storing');
if (!sendAvailable) log('`threatcol send` is not built yet: autocannon is the only load generator');
else if (quick)
  log('--quick: autocannon only (the full run adds `threatcol send` as a second load generator)');

const worker = new LoadWorker(pin);
const ctx: BenchContext = {
  quick,
  pin,
  worker,
  seconds: quick ? 0.8 : 5,
  pairs: quick ? 3 : 5,
  warmupSeconds: quick ? 0.5 : 2,
  // --quick keeps to autocannon: `send` starts a process per run and would double the smoke test.
  sendAvailable: sendAvailable && !quick,
  log,
  runs: {},
};
const root = mkdtempSync(join(tmpdir(), 'threatcol-bench-'));
const running: ServerUnderTest[] = [];
const track = <T extends ServerUnderTest>(s: T): T => {
  running.push(s);
  return s;
};
const stop = async (s: ServerUnderTest) => {
  running.splice(running.indexOf(s), 1);
  await s.stop();
};

const single = standardWorkload('firewall', ctx.seconds);
const batch = standardWorkload('generic', ctx.seconds);
/** The zone of the headline keep-alive sensor: firewalls log in local time, with DST. */
const ZONE = 'Europe/Berlin';
const prefillBytes = quick ? 128 * 1024 * 1024 : 1024 * 1024 * 1024;
const rows: Row[] = [];
const extra: Record<string, unknown> = {};

/**
 * Figure 8: the NATS backend (one node, replicas 1; three routed nodes, replicas 3) rotated with the reference
 * and the files collector `files` (both running). Dedupe is off as for every row (startThreatcol).
 * --quick: one node, keep-alive only.
 */
async function natsFigures(ref: ServerUnderTest, files: ThreatcolServer): Promise<Row[]> {
  const version = spawnSync(NATS_SERVER, ['--version'], { encoding: 'utf8' });
  if (version.error || version.status !== 0) {
    log(
      `figure 8: skipped, ${NATS_SERVER} does not run (${version.error?.message ?? version.stderr.trim()})`,
    );
    return [];
  }
  log(`figure 8: NATS backend (${version.stdout.trim()}), beside files and the reference`);
  if (quick) log('  --quick: one node, replicas 1, keep-alive only (the full run adds 3 nodes and batches)');
  const out: Row[] = [];
  const cleanups: Cleanups = [];
  const backends: NatsBackend[] = [];
  try {
    const start = async (label: string, nodes: 1 | 3) => {
      const b = await startNatsBackend(label, nodes, natsDataDir(root, label), pin, cleanups);
      track(b.server);
      backends.push(b);
    };
    await start('NATS 1 node R1', 1);
    if (!quick) await start('NATS 3 nodes R3', 3);
    await warmUp(
      ctx,
      backends.map((b) => b.server),
      files,
      single,
    );
    out.push(...(await natsRows(ctx, 'keep-alive /firewall, UTC sensor', ref, files, backends, single)));
    if (!quick) {
      await warmUp(
        ctx,
        backends.map((b) => b.server),
        files,
        batch,
      );
      out.push(
        ...(await natsRows(ctx, `batched /generic x${batch.recordsPerRequest}`, ref, files, backends, batch)),
      );
    }
  } finally {
    // Collectors first: a collector whose NATS vanished under it would not stop cleanly.
    for (const b of backends) await stop(b.server).catch(() => {});
    await runCleanups(cleanups);
  }
  return out;
}

try {
  log('starting threatcol (ECDSA) and the reference');
  const tc = track(await startThreatcol('threatcol', join(root, 'ecdsa'), pin));
  const ref = track(await startReference('reference', tc.certPath, tc.keyPath, pin));
  const zoned = await zonedSensor(tc, ZONE);
  await warmUp(ctx, [ref, tc, zoned], tc, single);

  log(`figure 2: keep-alive ingestion, a firewall in ${ZONE} (the headline) and one on UTC`);
  rows.push(...(await keepAlive(ctx, ref, zoned, single, ZONE)));
  rows.push(...(await keepAlive(ctx, ref, tc, single)));
  log('figure 4: batched generic records');
  await warmUp(ctx, [ref, tc], tc, batch);
  const b = await batched(ctx, ref, tc, batch);
  rows.push(...b.rows);
  log('figure 9: against the measured bound (parse + validation + group-committed fdatasync, nothing else)');
  mkdirSync(join(root, 'bound'));
  const bound = track(await startBound('bound', tc.certPath, tc.keyPath, join(root, 'bound'), pin));
  await warmUp(ctx, [bound], tc, single);
  rows.push(...(await againstBound(ctx, bound, zoned, single, `keep-alive /firewall, sensor in ${ZONE}`)));
  await warmUp(ctx, [bound], tc, batch);
  rows.push(...(await againstBound(ctx, bound, tc, batch, `batched /generic x${batch.recordsPerRequest}`)));
  await stop(bound);
  log('figure 11: against the contract bound (the bound plus authentication, the DESIGN 3 record, the ids)');
  mkdirSync(join(root, 'contract'));
  const contract = track(
    await startContractBound(
      'contract bound',
      tc.certPath,
      tc.keyPath,
      join(root, 'contract'),
      [
        { sensor: zoned.sensor, key: zoned.key, timezone: ZONE },
        { sensor: tc.sensor, key: tc.key, timezone: 'UTC' },
      ],
      pin,
    ),
  );
  const asContract = { figure: '11', name: 'the contract bound' };
  await warmUp(ctx, [contract], zoned, single);
  rows.push(
    ...(await againstBound(
      ctx,
      contract,
      zoned,
      single,
      `keep-alive /firewall, sensor in ${ZONE}`,
      asContract,
    )),
  );
  await warmUp(ctx, [contract], tc, batch);
  rows.push(
    ...(await againstBound(
      ctx,
      contract,
      tc,
      batch,
      `batched /generic x${batch.recordsPerRequest}`,
      asContract,
    )),
  );
  log('figure 15: dedupe on, as shipped: against dedupe off and the contract bound (issue 30)');
  const deduping = track(
    await startThreatcol('threatcol-dedupe', join(root, 'dedupe'), pin, {
      env: { THREATCOL_DEDUPE_WINDOW_SECONDS: '120' },
    }),
  );
  const dedupeOn = await zonedSensor(deduping, ZONE);
  await warmUp(ctx, [dedupeOn, zoned, contract], zoned, single);
  rows.push(
    ...(await dedupeRows(ctx, contract, dedupeOn, zoned, single, `keep-alive /firewall, sensor in ${ZONE}`)),
  );
  await stop(deduping);
  await stop(contract);
  rows.push(...(await natsFigures(ref, tc)));
  log('figure 3: new connection per request, ECDSA');
  rows.push(...(await newConnection(ctx, 'ECDSA', ref, tc, single)));
  const acked = Object.values(ctx.runs)
    .flatMap((p) => p.threatcol)
    .filter((m) => m.server === 'threatcol')
    .reduce((n, m) => n + m.records, 0);
  await stop(ref);
  await stop(tc);
  const stored = await storeFootprint(tc.dataDir);
  extra.durability = { acknowledged: acked, stored: stored.records, ok: stored.records >= acked };
  log(`  acknowledged ${fmt.n(acked)} records in measured runs, ${fmt.n(stored.records)} on disk`);

  log('figure 3: new connection per request, RSA');
  const rsa = track(
    await startThreatcol('threatcol-rsa', join(root, 'rsa'), pin, {
      env: { THREATCOL_TLS_SELF_SIGNED_KEY_TYPE: 'rsa' },
    }),
  );
  const refRsa = track(await startReference('reference-rsa', rsa.certPath, rsa.keyPath, pin));
  await warmUp(ctx, [refRsa, rsa], rsa, single);
  rows.push(...(await newConnection(ctx, 'RSA', refRsa, rsa, single)));
  await stop(refRsa);
  await stop(rsa);

  log(`figure 5: store size (pre-filling ${fmt.mb(prefillBytes)})`);
  const fullDir = join(root, 'full');
  const filled = prefillStore(fullDir, prefillBytes);
  log(`  wrote ${fmt.n(filled.records)} records in ${filled.segments} segments in ${fmt.ms(filled.ms)}`);
  extra.prefill = filled;
  const empty = track(await startThreatcol('threatcol-empty', join(root, 'empty'), pin));
  const full = track(await startThreatcol('threatcol-1gb', fullDir, pin));
  await warmUp(ctx, [empty, full], empty, batch);
  rows.push(...(await storeSize(ctx, empty, full, batch, filled.bytes)));
  await stop(empty);
  await stop(full);
  const genericFootprint = await storeFootprint(empty.dataDir);

  const window = quick ? 5 : 60;
  log(`figure 6: memory under ${window} s of keep-alive load`);
  const mem = track(await startThreatcol('threatcol-memory', join(root, 'memory'), pin));
  const tcMemory = await memoryUnderLoad(ctx, mem, mem, single, window);
  const refMem = track(await startReference('reference-memory', mem.certPath, mem.keyPath, pin));
  const refMemory = await memoryUnderLoad(ctx, refMem, mem, single, quick ? 2 : 15);
  rows.push(...memoryRows(tcMemory, refMemory, quick));
  await stop(refMem);
  await stop(mem);
  const firewallFootprint = await storeFootprint(mem.dataDir);
  extra.memory = { threatcol: tcMemory, reference: refMemory };

  if (!quick) {
    log(
      'figure 10: the independent measure, mirrored (unpinned, 3 x 8 s, dedupe on as shipped, --log-level warn)',
    );
    const free = { pinned: false, serverCpu: '', loadCpu: '', reason: 'not pinned' };
    const outside = track(
      await startThreatcol('threatcol-outsider', join(root, 'outsider'), free, {
        env: { THREATCOL_DEDUPE_WINDOW_SECONDS: '120' },
        args: ['--log-level', 'warn'],
        quiet: true,
      }),
    );
    const outsideRef = track(
      await startReference('reference-outsider', outside.certPath, outside.keyPath, free),
    );
    const outsideWorker = new LoadWorker(free);
    try {
      const outsideCtx = { ...ctx, worker: outsideWorker, pin: free };
      const berlin = await zonedSensor(outside, ZONE);
      await warmUp(outsideCtx, [outsideRef, berlin], berlin, single);
      rows.push(...(await outsiderMeasure(outsideCtx, outsideRef, berlin, single)));
    } finally {
      outsideWorker.close();
    }
    await stop(outsideRef);
    await stop(outside);
  }

  log('figure 12: forwarding per second of forwarder CPU (webhook sink; syslog to rsyslogd over TLS)');
  rows.push(...(await forwardingRows(ctx)));
  log('figure 13: keep-alive ingest with one output attached against none');
  rows.push(...(await outputIngestRows(ctx, root)));
  log('figure 14: syslog over TLS per server CPU second, beside a bare node:tls reader and syslog-ng');
  rows.push(...(await syslogRows(ctx, root)));

  log(
    'figure 17: blocklists: the decisions engine per CPU-second, ingest with it on, feeds rendered and polled',
  );
  rows.push(...(await decisionsRows(ctx, root)));
  log('figure 18: keep-alive ingest with country and AS enrichment on against off; look-ups per second');
  rows.push(...enrichRows(ctx));

  log('figure 7: CLI start-up');
  const cli = await cliStartup(ctx, tc.dataDir, { dataDir: fullDir, bytes: filled.bytes }, tailAvailable);
  rows.push(...cli.rows);
  extra.cliMs = cli.ms;
  log('figure 7b: the look-up (threats search) on the big store');
  const lookUp = await lookUpFigure(
    { dataDir: fullDir, bytes: filled.bytes, records: filled.records },
    quick ? 1 : 3,
  );
  rows.push(...lookUp.rows);
  extra.lookUp = lookUp.runs;

  log("figure 16: the bundled runtime beside the machine's node (ingest, CPU per record, memory, start-up)");
  const runtime = await runtimeFigure(ctx, join(root, 'runtime'));
  rows.push(...runtime.rows);
  extra.runtimes = runtime.runs.map((r) => ({
    ...r,
    rounds: r.rounds.map((m) => ({
      rps: m.recordsPerSecond,
      cpuSeconds: m.serverCpuSeconds,
      rss: m.serverRss,
    })),
  }));

  const perCore = (label: string) =>
    (ctx.runs[label]?.threatcol ?? []).map((m) => m.recordsPerSecond / m.serverCores);
  const keepAliveRuns = perCore(`2 keep-alive ${ZONE} [autocannon]`);
  const utcRuns = perCore('2 keep-alive [autocannon]');
  const batchRuns = b.pairs.threatcol.map((m) => m.recordsPerSecond / m.serverCores);
  const perRecord = (f: { bytes: number; records: number }) => f.bytes / Math.max(1, f.records);
  extra.capacity = {
    firewallRecordsPerCoreSecond: median(keepAliveRuns),
    firewallUtcRecordsPerCoreSecond: median(utcRuns),
    genericBatchedRecordsPerCoreSecond: median(batchRuns),
    firewallBytesPerRecord: perRecord(firewallFootprint),
    genericBytesPerRecord: perRecord(genericFootprint),
    firewallGBPerMillion: (perRecord(firewallFootprint) * 1e6) / 1e9,
    genericGBPerMillion: (perRecord(genericFootprint) * 1e6) / 1e9,
  };
} finally {
  worker.close();
  for (const s of [...running]) await s.stop().catch(() => {});
  if (!keep) rmSync(root, { recursive: true, force: true });
}

const failed = rows.filter((r) => r.pass === false).length;
process.stdout.write(`\n${textTable(rows)}\n\n`);
const cap = extra.capacity as Record<string, number>;
const capacity = [
  `records/s per core: ${fmt.n(cap.firewallRecordsPerCoreSecond ?? Number.NaN)} single firewall records (keep-alive, ${ZONE}; ` +
    `${fmt.n(cap.firewallUtcRecordsPerCoreSecond ?? Number.NaN)} UTC), ` +
    `${fmt.n(cap.genericBatchedRecordsPerCoreSecond ?? Number.NaN)} generic records in arrays of 100`,
  `bytes per record on disk: ${fmt.n(cap.firewallBytesPerRecord ?? Number.NaN)} (firewall), ${fmt.n(cap.genericBytesPerRecord ?? Number.NaN)} (generic); ` +
    `per million records: ${(cap.firewallGBPerMillion ?? 0).toFixed(2)} GB (firewall), ${(cap.genericGBPerMillion ?? 0).toFixed(2)} GB (generic)`,
];
process.stdout.write(`${capacity.join('\n')}\n`);
const header = `${machine.nproc} x ${machine.cpu}, ${machine.memoryGiB} GiB, Node ${machine.node}, ${pin.reason}${quick ? ', --quick' : ''}`;
const path = writeResults(
  { date: new Date().toISOString(), quick, machine, sendAvailable, tailAvailable, ...extra, runs: ctx.runs },
  rows,
  `${header}\n\n${markdownTable(rows)}\n\n${capacity.map((c) => `- ${c}`).join('\n')}`,
);
log(`${rows.length} rows, ${failed} failed; results in ${path.slice(ROOT.length)}`);
process.exitCode = failed > 0 ? 1 : 0;
