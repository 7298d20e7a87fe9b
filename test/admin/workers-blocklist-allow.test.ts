// `serve --workers 2`: the primary serves the dashboard's Blocklist panel, the workers the feeds. A reload
// (SIGHUP) that adds a `blocklist.allow` entry takes the block it covers out of the workers' feed and marks it
// kept out on the primary's panel at once, as in a single process: the panel never shows blocks the feeds
// already leave out. Uses dist/ (npm run build).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { request } from 'undici';
import { loadConfig } from '../../src/config/load-config.js';
import { openStore } from '../../src/store/open-store.js';
import { spawnServe } from '../helpers/cli.js';
import { trustingAgent } from '../helpers/client.js';
import { blockChange, feedAuthorization, feedChange } from '../helpers/decisions.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

/** Hang guard: the panel follows a change within about a second. */
const GUARD_MS = 20_000;
const PASSWORD = 'workers-allow-password-1';
const BLOCKED = '198.51.100.7';
const ALLOWED = '198.51.100.0/24';

interface Panel {
  blocks: Array<{ address: string; allowedBy: string | null }>;
  total: number;
  keptOut: number;
  allow: Array<{ network: string; source: string }>;
  blocked?: Record<string, unknown>;
}

function writeConfig(path: string, allow: string[]): void {
  writeFileSync(path, JSON.stringify({ blocklist: { allow }, registry: { pollIntervalMs: 100 } }));
}

test('--workers 2: a reload that allows a blocked network takes it out of the feed and the panel alike', {
  timeout: 120_000,
}, async (t) => {
  const dataDir = makeTempDir(t);
  const configPath = join(dataDir, 'config.json');
  writeConfig(configPath, []);
  const { config } = loadConfig({ env: {}, configPath, overrides: { dataDir } });
  const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  const now = Date.now();
  const changes = [blockChange(`${BLOCKED}/32`, now, now + 86_400_000), feedChange('edge', PASSWORD)];
  await store.decisions.apply(changes);
  await store.close();

  const serve = await spawnServe(dataDir, ['--workers', '2', '--config', configPath]);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dataDir);
  const feed = async () => {
    // A fresh connection each time: node:cluster's round robin hands them to either worker.
    const res = await request(`${serve.url}/feeds/edge`, {
      headers: {
        authorization: feedAuthorization('edge', PASSWORD),
        connection: 'close',
      },
      dispatcher: agent,
    });
    assert.equal(res.statusCode, 200);
    return res.body.text();
  };
  const panel = async (): Promise<Panel> => {
    const res = await request(`${serve.adminUrl}/api/blocklist?check=${BLOCKED}`);
    assert.equal(res.statusCode, 200);
    return (await res.body.json()) as Panel;
  };

  assert.equal(await feed(), `${BLOCKED}\n`);
  await until(
    async () => Object.keys((await panel()).blocked ?? {}).includes(BLOCKED),
    GUARD_MS,
    'the block marked on the panel',
  );

  writeConfig(configPath, [ALLOWED]);
  serve.child.kill('SIGHUP');
  // Every worker has reloaded once two feeds in a row (either worker) leave the block out.
  let without = 0;
  await until(
    async () => {
      without = (await feed()) === '' ? without + 1 : 0;
      return without >= 4;
    },
    GUARD_MS,
    'the block out of both workers feeds',
  );
  let last: Panel | null = null;
  const ms = await until(
    async () => {
      last = await panel();
      return last.blocks.find((b) => b.address === `${BLOCKED}/32`)?.allowedBy === ALLOWED;
    },
    GUARD_MS,
    'the block kept out on the panel',
  );
  const p = last as unknown as Panel;
  assert.equal(p.total, 1);
  assert.equal(p.keptOut, 1);
  assert.deepEqual(p.blocked, {}, 'a block the feeds leave out is not marked blocked');
  assert.deepEqual(
    p.allow.map((a) => [a.network, a.source]),
    [[ALLOWED, 'configuration']],
  );
  t.diagnostic(`the panel showed the reloaded allow entry ${ms} ms after the feeds did`);
});
