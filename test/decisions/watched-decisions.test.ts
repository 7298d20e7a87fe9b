// One watch of the decisions per process (decisions/watched-decisions.ts), over the real files store: every
// watcher gets the one state (a later watcher at once), a change reaches them all, the store is watched once,
// and the watch stops with its last watcher.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { shareDecisionsWatch } from '../../src/decisions/watched-decisions.js';
import type { DecisionsState, DecisionsStore } from '../../src/store/decisions.js';
import { openStore } from '../../src/store/open-store.js';
import { blockChange } from '../helpers/decisions.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const GUARD_MS = 10_000;

test('shareDecisionsWatch: one watch of the store for every watcher, stopped with the last', async (t) => {
  const dataDir = makeTempDir(t);
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir, 'registry.pollIntervalMs': 50 },
  });
  const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  t.after(() => store.close());
  const now = Date.now();
  await store.decisions.apply([blockChange('192.0.2.1/32', now, now + 3_600_000)]);

  // The real store, its watches counted.
  let watches = 0;
  let running = 0;
  const counted: DecisionsStore = {
    ...store.decisions,
    watch(onState, onError) {
      watches++;
      running++;
      const inner = store.decisions.watch(onState, onError);
      return {
        stop() {
          running--;
          inner.stop();
        },
      };
    },
  };
  const shared = shareDecisionsWatch(counted);
  const seen: DecisionsState[][] = [[], []];
  const first = shared.watch(
    (s) => seen[0]?.push(s),
    (e) => assert.fail(e),
  );
  await until(() => (seen[0]?.length ?? 0) > 0, GUARD_MS, 'the first state');
  const second = shared.watch(
    (s) => seen[1]?.push(s),
    (e) => assert.fail(e),
  );
  assert.equal(seen[1]?.length, 1, 'a later watcher gets the state at once');
  assert.equal(seen[1]?.[0], seen[0]?.at(-1), 'the same state, not a copy');
  assert.equal(watches, 1);

  await store.decisions.apply([blockChange('192.0.2.2/32', now, now + 3_600_000)]);
  for (const mine of seen)
    await until(() => mine.at(-1)?.blocks.has('192.0.2.2/32') === true, GUARD_MS, 'the change');
  assert.equal(seen[0]?.at(-1), seen[1]?.at(-1));

  first.stop();
  first.stop();
  assert.equal(running, 1, 'the other watcher still watches');
  second.stop();
  assert.equal(running, 0, 'stopped with the last watcher');
  const third = shared.watch(
    () => {},
    (e) => assert.fail(e),
  );
  assert.equal(watches, 2, 'a new watcher starts it again');
  third.stop();
});
