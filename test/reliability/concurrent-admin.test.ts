// Reliability 9: 20 `sensor add` processes at once against one data directory while serve runs: all 20 exist,
// the registry stays valid, and the running daemon accepts every new key within 1 s.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { soak, stopAfter } from './support.js';

const N = 20;

test(`concurrent administration: ${N} sensor add processes at once while serve runs`, async (t) => {
  const dataDir = makeTempDir(t);
  const serve = await spawnServe(dataDir);
  stopAfter(t, serve);
  const agent = trustingAgent(dataDir);
  t.after(() => agent.destroy());

  for (let round = 0; round < soak(1, 5); round++) {
    const names = Array.from({ length: N }, (_, i) => `admin-${round}-${i}`);
    const startedAt = Date.now();
    const results = await Promise.all(
      names.map((name) =>
        runCli(['sensor', 'add', name, '--data-dir', dataDir, '--json'], { timeoutMs: 60_000 }),
      ),
    );
    const addedAt = Date.now();
    for (const [i, r] of results.entries()) assert.equal(r.code, 0, `${names[i]}: ${r.stderr}`);
    const keys = results.map((r) => (JSON.parse(r.stdout) as { key: string }).key);
    assert.equal(new Set(keys).size, N, 'every key is different');

    // The running daemon accepts every key within 1 s of the last add.
    const pending = new Set(names.map((_, i) => i));
    while (pending.size > 0 && Date.now() - addedAt < 1000) {
      await Promise.all(
        [...pending].map(async (i) => {
          const r = await post(serve.url, '/generic', genericRecord(), {
            agent,
            sensor: names[i],
            key: keys[i],
          });
          if (r.status === 200) pending.delete(i);
        }),
      );
    }
    t.diagnostic(
      `round ${round}: ${N} adds ok in ${addedAt - startedAt} ms; all keys accepted ${Date.now() - addedAt} ms after the last add`,
    );
    assert.equal(pending.size, 0, `${pending.size} keys not accepted within 1 s`);

    // The registry is valid JSON with all of them, once each.
    const registry = JSON.parse(readFileSync(join(dataDir, 'sensors.json'), 'utf8')) as {
      sensors: { name: string }[];
    };
    for (const name of names) assert.equal(registry.sensors.filter((s) => s.name === name).length, 1, name);
    const list = await runCli(['sensor', 'list', '--data-dir', dataDir, '--json']);
    assert.equal(list.code, 0, list.stderr);
    const listed = (JSON.parse(list.stdout) as { name: string }[]).map((s) => s.name);
    for (const name of names) assert.ok(listed.includes(name), `${name} listed`);
  }
});
