// Measures start-up of the compiled CLI (bin/threatcol -> dist/) against the TypeScript sources run through tsx:
// `sensor list` (spawn to exit) and `serve` (spawn to "threatcol is listening"). Not a test: run it by hand,
//   npm run build && node --import tsx test/service/measure-startup.ts [runs]
// and copy the figures into docs/operations.md ("Runtime: compiled JavaScript").
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addSensorCli, BIN, cleanEnv, serveArgs } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RUNS = Number(process.argv[2] ?? 15);

function timeRun(args: string[], until: 'exit' | 'listening'): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const elapsed = () => Number(process.hrtime.bigint() - start) / 1e6;
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (until === 'listening' && out.includes('"threatcol is listening"')) {
        const ms = elapsed();
        child.once('exit', () => resolve(ms));
        child.kill('SIGTERM');
      }
    });
    child.once('exit', (code) => {
      if (until === 'exit') {
        if (code === 0) resolve(elapsed());
        else reject(new Error(`exit ${code}: ${err}`));
      } else if (!out.includes('"threatcol is listening"')) {
        reject(new Error(`serve exited (${code}) before listening: ${err}`));
      }
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

async function main(): Promise<void> {
  const dataDir = makeTempDir();
  await addSensorCli(dataDir, 'fw1');
  const entry = join(makeTempDir(), 'entry.mts');
  writeFileSync(
    entry,
    `import { main } from ${JSON.stringify(join(ROOT, 'src/cli/main.ts'))};\nprocess.exitCode = await main(process.argv.slice(2));\nsetTimeout(() => process.exit(), 3000).unref();\n`,
  );
  const runners = {
    compiled: [BIN],
    tsx: ['--import', 'tsx', entry],
  };
  const list = ['sensor', 'list', '--data-dir', dataDir];
  const serve = serveArgs(dataDir);
  // One warm-up each (creates the self-signed certificate, fills tsx's cache), then alternate to share noise.
  await timeRun([...runners.compiled, ...serve], 'listening');
  await timeRun([...runners.tsx, ...serve], 'listening');
  const times: Record<string, number[]> = {
    'list compiled': [],
    'list tsx': [],
    'serve compiled': [],
    'serve tsx': [],
  };
  for (let i = 0; i < RUNS; i++) {
    for (const [name, prefix] of Object.entries(runners)) {
      times[`list ${name}`]?.push(await timeRun([...prefix, ...list], 'exit'));
      times[`serve ${name}`]?.push(await timeRun([...prefix, ...serve], 'listening'));
    }
  }
  const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
  console.log(`node ${process.version}, ${RUNS} runs each, median wall time from spawn:`);
  for (const what of ['list', 'serve']) {
    const c = m[`${what} compiled`] as number;
    const t = m[`${what} tsx`] as number;
    console.log(
      `  ${what === 'list' ? 'sensor list' : 'serve (to listening)'}: compiled ${c.toFixed(0)} ms, tsx ${t.toFixed(0)} ms, tsx/compiled ${(t / c).toFixed(2)}x`,
    );
  }
}

await main();
