// Measures what dropped dashboard feeds cost the daemon (issue 27 F5): a store of 300,000 records in the last
// 23 hours, 60 feeds with a filter that matches nothing opened at once and dropped as soon as they answer,
// then the daemon's CPU seconds over the next 10 s (from /proc). `THREATCOL_BIN` measures another build (the
// one before the fix). Run with `node --import tsx test/tools/measure-dropped-feeds.ts`; not part of the suite.
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threatsDir, utcDay } from '../../src/store/files/segments.js';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { storedGenericRecord } from '../helpers/records.js';

const dataDir = mkdtempSync(join(tmpdir(), 'threatcol-feeds-'));
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const get = (url: string, drop: boolean) =>
  new Promise<number>((resolve) => {
    const req = request(url, { agent: false }, (res) => {
      if (drop) req.destroy();
      else res.resume().on('end', () => resolve(res.statusCode ?? 0));
      if (drop) resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.end();
  });
try {
  await addSensorCli(dataDir, 'fw1');
  mkdirSync(threatsDir(dataDir), { recursive: true, mode: 0o700 });
  const now = Date.now();
  const fd = openSync(join(threatsDir(dataDir), `${utcDay(now)}-000001.ndjson`), 'a', 0o640);
  const lines: string[] = [];
  let bytes = 0;
  for (let i = 0; i < 300_000; i++) {
    const at = new Date(now - 23 * 3_600_000 + Math.floor(i * 276_000)).toISOString();
    lines.push(JSON.stringify(storedGenericRecord({ received_at: at, threat: `SSH brute force ${i}` })));
    if (lines.length === 10_000) {
      const text = `${lines.join('\n')}\n`;
      bytes += Buffer.byteLength(text);
      writeSync(fd, text);
      lines.length = 0;
    }
  }
  closeSync(fd);
  const serve = await spawnServe(
    dataDir,
    [],
    process.env.THREATCOL_BIN ? { bin: process.env.THREATCOL_BIN } : {},
  );
  try {
    const pid = serve.child.pid as number;
    // The dashboard's own day count first, so only the feeds are measured.
    for (;;) {
      const text = await new Promise<string>((resolve) => {
        request(`${serve.adminUrl}/api/summary`, (res) => {
          let body = '';
          res
            .setEncoding('utf8')
            .on('data', (d: string) => (body += d))
            .on('end', () => resolve(body));
        }).end();
      });
      if (text.includes('"complete":true')) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const before = cpuSeconds(pid);
    const statuses = await Promise.all(
      Array.from({ length: 60 }, () => get(`${serve.adminUrl}/api/feed?sensor=nosuch`, true)),
    );
    const answered = cpuSeconds(pid);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const after = cpuSeconds(pid);
    const counts: Record<number, number> = {};
    for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
    console.log(
      JSON.stringify({
        storeBytes: bytes,
        statuses: counts,
        cpuToAnswer: answered - before,
        cpuNext10s: after - answered,
      }),
    );
  } finally {
    await serve.stop('SIGKILL');
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
