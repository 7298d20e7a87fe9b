// Power cuts while blocks are made (LazyFS drops every byte not fsynced): after each restart, every address
// whose critical record was acknowledged is blocked, and no block lasts longer than its rule says.
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { findLazyfs, mountLazyfs } from '../helpers/lazyfs.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { untilDrained } from '../helpers/until.js';
import { LAZYFS_ENV } from '../reliability/power-cut-support.js';

const CYCLES = 2;
const DURATION_MS = 86_400_000;
const lazyfs = await findLazyfs();

test(`power cut while blocks are made, ${CYCLES} times: every acknowledged critical record's address stays blocked, none for longer than its rule`, {
  skip: 'skip' in lazyfs ? lazyfs.skip : false,
}, async (t) => {
  if (!('bin' in lazyfs)) return;
  let running: ServeProcess | null = null;
  let stop = false;
  t.after(() => {
    stop = true;
    return running?.stop('SIGKILL');
  });
  const mount = await mountLazyfs(t, lazyfs.bin, { cacheMiB: 64 });
  const dataDir = join(mount.dir, 'data');
  const config = join(makeTempDir(t), 'config.json');
  writeFileSync(
    config,
    JSON.stringify({ blocklist: { rules: { critical: { minCriticality: 4, duration: '24h' } } } }),
  );
  const key = await addSensorCli(dataDir, 'fw', [], LAZYFS_ENV);
  /** Address -> when its record was acknowledged (its block may not end later than that plus 24 h). */
  const acked = new Map<string, number>();
  let n = 0;

  const blocks = async (): Promise<Map<string, string>> => {
    const r = await runCli(['block', 'list', '--json', '--data-dir', dataDir, '--config', config], {
      env: LAZYFS_ENV,
    });
    assert.equal(r.code, 0, r.stderr);
    return new Map(
      (JSON.parse(r.stdout) as { address: string; until: string }[]).map((b) => [b.address, b.until]),
    );
  };
  const missing = async () => {
    const now = await blocks();
    return [...acked.keys()].filter((address) => !now.has(`${address}/32`)).length;
  };

  for (let cycle = 1; cycle <= CYCLES + 1; cycle++) {
    const serve = await spawnServe(dataDir, ['--config', config], { env: LAZYFS_ENV });
    running = serve;
    // After a cut: what was acknowledged before it is blocked again (read from the log, not lost with it).
    await untilDrained(missing, 60_000, `cycle ${cycle}: the blocks of every acknowledged record`);
    for (const [address, until] of await blocks()) {
      const at = acked.get(address.replace(/\/32$/, ''));
      if (at !== undefined)
        assert.ok(Date.parse(until) <= at + DURATION_MS, `${address} lasts past its rule: ${until}`);
    }
    if (cycle > CYCLES) {
      await serve.stop();
      break;
    }
    const agent = trustingAgent(dataDir, { connections: 2 });
    stop = false;
    const target = acked.size + 200;
    const load = (async () => {
      while (!stop) {
        const addresses = Array.from({ length: 10 }, () => {
          n++;
          return `198.18.${(n >> 8) & 0xff}.${n & 0xff}`;
        });
        const body = addresses.map((source_ip) => genericRecord({ source_ip, criticality: 4 }));
        try {
          const reply = await post(serve.url, '/generic', body, { agent, sensor: 'fw', key });
          if (reply.status === 200) for (const address of addresses) acked.set(address, Date.now());
        } catch {}
      }
    })();
    await untilDrained(
      () => Math.max(0, target - acked.size),
      60_000,
      `cycle ${cycle}: records acknowledged`,
    );
    stop = true;
    serve.child.kill('SIGKILL');
    await serve.exited;
    await load;
    await agent.destroy();
    await mount.cut();
    await mount.mount();
  }
  t.diagnostic(`cycles=${CYCLES} acknowledged addresses=${acked.size}`);
});
