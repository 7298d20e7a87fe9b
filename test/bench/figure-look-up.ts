// Figure 7b: `threats search` on the benchmark's big store, for an address that matches nothing, so the
// look-up reads back until its bound (1 M records or 512 MiB) or the store's start: its time and peak memory.
import { spawn } from 'node:child_process';
import { SEARCH_MAX_BYTES, SEARCH_MAX_RECORDS } from '../../src/store/search-records.js';
import { cleanEnv } from '../helpers/cli.js';
import { BIN, ROOT } from './processes.js';
import { fmt, median, type Row } from './report.js';

export interface LookUpRun {
  seconds: number;
  /** Peak resident memory of the CLI process (GNU time's %M), bytes. */
  peakRss: number;
  /** The look-up said its bound stopped it (else it read the whole window). */
  bounded: boolean;
}

/** One `threats search` under GNU time: wall time, peak RSS and whether the bound stopped it. */
export function runLookUp(dataDir: string, args: string[]): Promise<LookUpRun> {
  const argv = [
    '-f',
    'TIME %e %M',
    process.execPath,
    BIN,
    'threats',
    'search',
    '--data-dir',
    dataDir,
    ...args,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', argv, {
      cwd: ROOT,
      env: cleanEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('close', (code) => {
      const m = /TIME ([\d.]+) (\d+)/.exec(err);
      if (code !== 0 || !m)
        reject(new Error(`threats search ${args.join(' ')} exited ${code}: ${err.slice(0, 500)}`));
      else
        resolve({
          seconds: Number(m[1]),
          peakRss: Number(m[2]) * 1024,
          bounded: /stopped after reading back/.test(err),
        });
    });
  });
}

/** Median of `n` look-ups for an address in no record (the worst case: everything in the window is read). */
export async function lookUpFigure(
  bigStore: { dataDir: string; bytes: number; records: number },
  n: number,
): Promise<{ rows: Row[]; runs: LookUpRun[] }> {
  const runs: LookUpRun[] = [];
  for (let i = 0; i < n; i++)
    runs.push(await runLookUp(bigStore.dataDir, ['--src', '203.0.113.0/24', '--since', '30d']));
  const seconds = median(runs.map((r) => r.seconds));
  const rss = Math.max(...runs.map((r) => r.peakRss));
  const readable = Math.min(bigStore.bytes, SEARCH_MAX_BYTES);
  return {
    runs,
    rows: [
      {
        figure: `7b CLI \`threats search\` matching nothing, ${fmt.mb(bigStore.bytes)} / ${bigStore.records} records store`,
        generator: `${n} runs`,
        threatcol: `${seconds.toFixed(2)} s, peak RSS ${fmt.mb(rss)}${runs.every((r) => r.bounded) ? ', bounded' : ''}`,
        reference: `reads <= ${SEARCH_MAX_RECORDS} records / ${fmt.mb(SEARCH_MAX_BYTES)}`,
        ratio: `${(readable / 1024 ** 2 / seconds).toFixed(0)} MiB/s`,
        target: '<= 10 s, RSS <= 256 MB',
        pass: seconds <= 10 && rss <= 256 * 1024 ** 2,
      },
    ],
  };
}
