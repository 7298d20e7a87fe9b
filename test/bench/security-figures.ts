// The issue 9 attack figures, measured on the compiled binary as the review did: RSS and time of the nested
// repair body, the 503 window of a quiet sensor during stalled gzip uploads, bytes stored for a long key name,
// server CPU of invalid JSON. Run under flock: `flock /tmp/threatcol-bench.lock npx tsx test/bench/security-figures.ts`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:tls';
import { gzipSync } from 'node:zlib';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { cpuMs } from '../reliability/support.js';

const MB = 1e6;
const cleanups: (() => unknown)[] = [];
const t = { after: (fn: () => unknown) => cleanups.push(fn) };

function peakRss(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

async function main(): Promise<void> {
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'attacker');
  const quietKey = await addSensorCli(dataDir, 'quiet');
  const serve = await spawnServe(dataDir, [], {
    env: {
      THREATCOL_RATE_LIMIT_RECORDS_PER_SECOND: '0',
      THREATCOL_RATE_LIMIT_BYTES_PER_SECOND: process.env.BYTES_PER_SECOND ?? '0',
    },
  });
  const pid = serve.child.pid as number;
  const agent = trustingAgent(dataDir, { connections: 16 });
  const as = { agent, sensor: 'attacker', key, headers: { 'content-encoding': 'gzip' } };
  const quiet = { agent, sensor: 'quiet', key: quietKey };
  for (let i = 0; i < 20; i++) await post(serve.url, '/generic', genericRecord(), quiet);
  const out: Record<string, unknown> = {};

  const only = process.argv[2];
  if (only === undefined || only === 'stall') {
    // 2. stalled gzip uploads from one sensor; a second sensor sends 123-byte requests meanwhile.
    const before = peakRss(pid);
    const stalled = gzipSync(Buffer.alloc(4_194_304 - 64, 0x20));
    const sockets = Array.from({ length: 68 }, () => stallUpload(serve.port, dataDir, key, stalled));
    await Promise.all(sockets.map((s) => s.sent));
    const quietStatuses: { at: number; status: number }[] = [];
    const started = performance.now();
    while (performance.now() - started < 22_000) {
      const r = await post(serve.url, '/generic', genericRecord(), quiet);
      quietStatuses.push({ at: performance.now() - started, status: r.status });
      await new Promise((r2) => setTimeout(r2, 100));
    }
    const bad = quietStatuses.filter((q) => q.status !== 200);
    out.stalledGzip = {
      quietRequests: quietStatuses.length,
      quietNon200: bad.length,
      non200Window: bad.length
        ? `${Math.round(bad[0]?.at ?? 0)}-${Math.round(bad.at(-1)?.at ?? 0)} ms`
        : 'none',
      stalledAnswers: sockets
        .map((s) => s.status())
        .reduce<Record<string, number>>((m, s) => {
          m[s] = (m[s] ?? 0) + 1;
          return m;
        }, {}),
      rssBeforeMB: Math.round(before.rss / MB),
      peakRssMB: Math.round(peakRss(pid).hwm / MB),
    };
    for (const s of sockets) s.socket.destroy();
  }
  if (only === undefined || only === 'other') {
    // 1. nested-bracket repair body.
    const nested = gzipSync(`{"a":"x\\","b":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`);
    const before = peakRss(pid);
    let started = performance.now();
    const one = await post(serve.url, '/firewall', nested, as);
    out.nested = {
      gzBytes: nested.length,
      status: one.status,
      ms: Math.round(performance.now() - started),
      rssBeforeMB: Math.round(before.rss / MB),
      peakRssMB: Math.round(peakRss(pid).hwm / MB),
    };
    const big = gzipSync(`{"a":"x\\","b":${'['.repeat(2_000_000)}${']'.repeat(2_000_000)}}`);
    started = performance.now();
    const stalls: number[] = [];
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const s = performance.now();
        await post(serve.url, '/generic', genericRecord(), quiet);
        stalls.push(performance.now() - s);
      }
    })();
    const eight = await Promise.all(Array.from({ length: 8 }, () => post(serve.url, '/firewall', big, as)));
    probing = false;
    await probe;
    out.nestedEight = {
      statuses: eight.map((r) => r.status),
      ms: Math.round(performance.now() - started),
      peakRssMB: Math.round(peakRss(pid).hwm / MB),
      worstQuietMs: Math.round(Math.max(...stalls)),
    };

    // 3. long key name: bytes stored per request.
    const storedBefore = storedBytes(dataDir);
    const longKey = gzipSync(JSON.stringify({ ...genericRecord(), ['k'.repeat(4_000_000)]: 1 }));
    started = performance.now();
    const statuses3: number[] = [];
    for (let i = 0; i < 10; i++) statuses3.push((await post(serve.url, '/generic', longKey, as)).status);
    out.longKey = {
      gzBytes: longKey.length,
      statuses: statuses3,
      ms: Math.round(performance.now() - started),
      storedPerRequest: Math.round((storedBytes(dataDir) - storedBefore) / 10),
    };

    // 4. server CPU of invalid JSON.
    for (const [name, path, text] of [
      ['commas', '/generic', `[${'1,'.repeat(1_900_000)}}`],
      ['quotes', '/firewall', `{"a":"${'"x'.repeat(2_000_000)}"}`],
    ] as const) {
      const body = gzipSync(text);
      const cpu0 = cpuMs(pid);
      const r = await post(serve.url, path, body, as);
      out[`invalid-${name}`] = { gzBytes: body.length, status: r.status, serverCpuMs: cpuMs(pid) - cpu0 };
    }
    const cpu0 = cpuMs(pid);
    const valid = gzipSync(JSON.stringify(Array.from({ length: 1000 }, () => genericRecord())));
    await post(serve.url, '/generic', valid, { ...as, sensor: 'quiet', key: quietKey });
    out.validReference = { serverCpuMs: cpuMs(pid) - cpu0 };
  }
  console.log(JSON.stringify(out, null, 2));
  await agent.close();
  await serve.stop();
  for (const fn of cleanups.reverse()) await fn();
}

/** A gzip upload that sends all but its last 16 bytes and then stalls; records the status it is answered with. */
function stallUpload(port: number, dataDir: string, key: string, body: Buffer) {
  const ca = readFileSync(`${dataDir}/tls/cert.pem`, 'utf8');
  const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' });
  let answer = '';
  socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
  socket.on('error', () => {});
  const sent = new Promise<void>((resolve) => {
    socket.once('secureConnect', () => {
      socket.write(
        `POST /generic HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n` +
          `X-AUTH_KEY: ${key}\r\nX-SENSOR_NAME: attacker\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      socket.write(body.subarray(0, body.length - 16), () => resolve());
    });
  });
  return { socket, sent, status: () => /^HTTP\/1\.1 (\d+)/.exec(answer)?.[1] ?? 'none' };
}

function storedBytes(dataDir: string): number {
  let total = 0;
  for (const name of readdirSync(`${dataDir}/threats`)) total += statSync(`${dataDir}/threats/${name}`).size;
  return total;
}

await main();
