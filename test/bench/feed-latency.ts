// How long a block takes to reach a feed under load: the time from a record's 200 to the first poll of a feed
// that shows its block (figure 17 in `npm run bench`, and decisions-ab.ts).
import { Pool } from 'undici';
import { runCli } from '../helpers/cli.js';
import { firewallRecord } from './payloads.js';
import { keepAliveFirewallLoad, type ThreatcolServer } from './processes.js';

/**
 * A collector with rules (the engine on) under keep-alive load (`load`), plus a critical record from a new
 * (documentation) address every 0.3 s on a connection of its own, and a feed of its polled every 20 ms: ms from
 * each record's 200 to the first poll that showed its block (the guarantee is 1 s, docs/blocklists.md).
 */
export async function feedLatency(
  server: ThreatcolServer,
  seconds: number,
  load: { connections: number; nextBody: () => string },
): Promise<number[]> {
  const added = await runCli([
    'feed',
    'add',
    'probe',
    '--format',
    'plain',
    '--json',
    '--data-dir',
    server.dataDir,
  ]);
  if (added.code !== 0) throw new Error(`feed add failed (${added.code}): ${added.stderr}`);
  const { password } = JSON.parse(added.stdout) as { password: string };
  const authorization = `Basic ${Buffer.from(`probe:${password}`).toString('base64')}`;
  const pool = new Pool(server.url, { connections: 2, connect: { rejectUnauthorized: false } });
  const sent = new Map<string, number>();
  const latencies: number[] = [];
  let done = false;
  const poll = async () => {
    let etag = '';
    while (!done || sent.size > 0) {
      const res = await pool.request({
        method: 'GET',
        path: '/feeds/probe',
        headers: { authorization, ...(etag ? { 'if-none-match': etag } : {}) },
      });
      const text = await res.body.text();
      const seen = performance.now();
      if (res.statusCode === 200) {
        etag = String(res.headers.etag ?? '');
        const lines = new Set(text.split('\n'));
        for (const [address, at] of sent) {
          if (!lines.has(address)) continue;
          latencies.push(seen - at);
          sent.delete(address);
        }
      } else if (res.statusCode !== 304) throw new Error(`feed poll: ${res.statusCode} ${text}`);
      if (done && sent.size > 0 && performance.now() - Math.min(...sent.values()) > 10_000)
        throw new Error(`blocks not in the feed after 10 s: ${[...sent.keys()].join(' ')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const probe = async () => {
    const record = firewallRecord();
    for (let i = 0; !done; i++) {
      const address = `${i % 2 === 0 ? '198.51.100' : '203.0.113'}.${1 + Math.floor(i / 2)}`;
      const res = await pool.request({
        method: 'POST',
        path: '/firewall',
        headers: {
          'content-type': 'application/json',
          'x-auth_key': server.key,
          'x-sensor_name': server.sensor,
        },
        body: JSON.stringify({ ...record, src: address }),
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`probe: ${res.statusCode} ${text}`);
      sent.set(`${address}`, performance.now());
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  };
  const polling = poll();
  const probing = probe();
  await keepAliveFirewallLoad(server, { ...load, seconds });
  done = true;
  await probing;
  await polling;
  await pool.close();
  return latencies;
}
