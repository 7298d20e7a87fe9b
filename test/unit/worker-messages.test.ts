// A worker of `serve --workers` and the primary's messages: one that comes while the worker's daemon starts is
// acted on once it is up, never lost (node's IPC keeps no message for a listener added later).
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { pino } from 'pino';
import type { WorkerMessage } from '../../src/cluster/messages.js';
import { runWorker } from '../../src/cluster/worker.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { Daemon } from '../../src/daemon/start-daemon.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test("a reload the primary sends while the worker's daemon starts is applied once it is up", async (t) => {
  const ipc = new EventEmitter();
  const sent: WorkerMessage[] = [];
  const dataDir = makeTempDir(t);
  const loaded = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir },
  });
  const channel = {
    send: (message: WorkerMessage, callback?: (error: Error | null) => void) => {
      sent.push(message);
      callback?.(null);
      // The primary answers over IPC, later.
      if (message.tc === 'config-request') setImmediate(() => ipc.emit('message', { tc: 'config', loaded }));
    },
    // As process.on('message'): a message emitted with no listener is gone.
    onMessage: (handler: (message: unknown) => void) => void ipc.on('message', handler),
    onDisconnect: (handler: () => void) => void ipc.once('disconnect', handler),
    disconnect: () => {},
  };
  const calls: string[] = [];
  let finish: (code: number) => void = () => {};
  const daemon: Daemon = {
    address: { address: '127.0.0.1', family: 'IPv4', port: 4443 },
    adminAddress: null,
    fingerprint: 'ab'.repeat(32),
    reload: () => {
      calls.push('reload');
      return { ok: true, applied: [], restartNeeded: [] };
    },
    onConfigReloaded: () => {},
    stop: () => {
      calls.push('stop');
      finish(0);
    },
    done: new Promise<number>((resolve) => {
      finish = resolve;
    }),
  };
  let up: () => void = () => {};
  let starting: () => void = () => {};
  const startCalled = new Promise<void>((resolve) => {
    starting = resolve;
  });
  let reread: (() => unknown) | undefined;
  const running = runWorker({
    logger: () => pino({ level: 'silent' }),
    id: 1,
    workers: 2,
    channel,
    onSignal: () => {},
    start: (options) => {
      assert.deepEqual(options.loaded, loaded, "the daemon runs the primary's configuration");
      reread = options.reread;
      starting();
      return new Promise<Daemon>((resolve) => {
        up = () => resolve(daemon);
      });
    },
  });
  await startCalled;
  // SIGHUP forwarded while the daemon reads its certificate and opens the store.
  const next = { ...loaded, config: { ...loaded.config, log: { ...loaded.config.log, level: 'debug' } } };
  ipc.emit('message', { tc: 'reload', loaded: next });
  assert.deepEqual(calls, [], 'nothing to reload before the daemon is up');
  up();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(calls, ['reload']);
  assert.deepEqual(reread?.(), next, 'a reload applies what the primary sent with it');
  assert.deepEqual(
    sent.filter((m) => m.tc !== 'stats'),
    [
      { tc: 'config-request' },
      { tc: 'reloaded', sha256: daemon.fingerprint },
      { tc: 'listening', address: daemon.address },
    ],
  );
  // Once up, at once.
  ipc.emit('message', { tc: 'reload', loaded: next });
  assert.deepEqual(calls, ['reload', 'reload']);
  ipc.emit('message', { tc: 'stop' });
  assert.equal(await running, 0);
  assert.deepEqual(calls, ['reload', 'reload', 'stop']);
});
