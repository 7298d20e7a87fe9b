// The silence watcher's stop is bounded: a store that never answers (a frozen NATS server) holds neither the
// look in progress nor the lease's hand-back past a few seconds; the cut is logged at warn.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { startSilenceWatcher } from '../../src/sensors/silence-watcher.js';

test('a silence watcher whose store never answers stops within seconds, saying so at warn', async () => {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  const never = () => new Promise<never>(() => {});
  let leased = false;
  const watcher = startSilenceWatcher({
    sensors: () => [],
    stats: { read: never, readSilences: never, writeSilence: never },
    configuredExpectEvery: () => '1s',
    report: never,
    // The first lease is given (this collector leads); every later call, the hand-back too, never answers.
    lease: {
      decisions: {
        lease: async () => {
          if (leased) return never();
          leased = true;
          return true;
        },
      },
      holder: 'a',
      ttlMs: 15_000,
    },
    logger,
    lookEveryMs: 50,
  });
  await new Promise((r) => setTimeout(r, 300));
  const started = Date.now();
  await watcher.stop();
  const ms = Date.now() - started;
  // A hang guard, not a speed goal: before, stop() waited for the store for good.
  assert.ok(ms < 30_000, `stopped after ${ms} ms`);
  const cut = lines.find((l) => l.msg.startsWith('the silence watcher did not stop in time'));
  assert.equal(cut?.level, 40, JSON.stringify(lines));
});
