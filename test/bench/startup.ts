// Figure 7 alone: `node --import tsx test/bench/startup.ts [--quick] [--pairs N] [--base [LABEL=]BIN ...]`.
// CLI start-up of this build (and of other builds given with --base, e.g. a checkout before a change), each
// case paired with `node -e 0`; prints the table and writes test/bench/results/startup-<time>.json.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv } from '../helpers/cli.js';
import { argValue, baseBuilds } from './argv.js';
import { pairedStartup, startupCases, startupRow } from './figures-startup.js';
import { prefillStore } from './prefill.js';
import { BIN, detectPinning, ROOT } from './processes.js';
import { type Row, textTable } from './report.js';

const quick = process.argv.includes('--quick');
const pairs = Number(argValue('--pairs') ?? (quick ? 9 : 21));
const pin = detectPinning();
const cpu = pin.pinned ? pin.loadCpu : '';
const root = mkdtempSync(join(tmpdir(), 'threatcol-startup-'));
try {
  const dataDir = join(root, 'data');
  for (const name of ['fw-berlin', 'fw-paris', 'ids-1'])
    execFileSync(process.execPath, [BIN, 'sensor', 'add', name, '--data-dir', dataDir, '--json'], {
      env: cleanEnv(),
      stdio: 'ignore',
    });
  const storeDir = join(root, 'store');
  const filled = prefillStore(storeDir, (quick ? 32 : 128) * 1024 * 1024);
  const cases = startupCases(dataDir, { dataDir: storeDir, bytes: filled.bytes });
  const builds = [{ label: 'this build', bin: BIN }, ...baseBuilds()];
  const rows: Row[] = [];
  const results: Record<string, unknown>[] = [];
  process.stdout.write(`${pairs} pairs per case, ${pin.reason}\n`);
  // Case by case, every build in turn: a change in the box's load during the run touches all builds alike.
  for (const c of cases) {
    for (const build of builds) {
      const r = await pairedStartup(c, { pairs, cpu, bin: build.bin });
      const row = startupRow(c, r, builds.length > 1 ? `[${build.label}]` : 'CLI');
      rows.push(row);
      results.push({ build: build.label, ...r });
      process.stdout.write(`${row.figure}: ${row.ratio} (${row.threatcol} vs ${row.reference})\n`);
    }
  }
  process.stdout.write(`\n${textTable(rows)}\n`);
  const dir = join(ROOT, 'test/bench/results');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `startup-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    path,
    `${JSON.stringify({ date: new Date().toISOString(), pairs, pinning: pin.reason, results, rows }, null, 2)}\n`,
  );
  process.stdout.write(`${path}\n`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
