// Decisions written straight through the store in tests: a feed with a known password, a block; the store of
// an in-process collector opened beside it.
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { startDecisionEngine } from '../../src/decisions/engine.js';
import { hashKey } from '../../src/keys.js';
import type { Block, DecisionChange, DecisionsStore, FeedFormat } from '../../src/store/decisions.js';
import { openStore } from '../../src/store/open-store.js';
import type { TestServer } from './in-process-server.js';
import { makeTempDir } from './temp-dir.js';

/** Runs `use` with a store of `server`'s configuration and data directory opened beside it, then closes it. */
export async function withServerStore<T>(
  server: Pick<TestServer, 'loaded' | 'dataDir'>,
  use: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>,
): Promise<T> {
  const store = await openStore(server.loaded.config, {
    dataDir: server.dataDir,
    logger: pino({ level: 'silent' }),
  });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/**
 * A store of its own for a decisions engine started by the test: a temporary data directory, the configuration
 * with `overrides`, the record log to append to, the engine's log lines and the addresses they say it blocked,
 * and `startEngine` (startDecisionEngine on this store, stopped after the test; `now` its clock, `decisions` in
 * place of the store's, `lease` to run it as a leased one).
 */
export async function engineStore(t: { after(fn: () => unknown): void }, overrides: Record<string, unknown>) {
  const dataDir = makeTempDir(t, 'threatcol-engine-');
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent',
    overrides: { dataDir, ...overrides },
  });
  const lines: { msg?: string; address?: string; [field: string]: unknown }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const store = await openStore(config, { dataDir, logger });
  t.after(() => store.close());
  const log = await store.openRecordLog();
  t.after(() => log.close());
  const blocked = () => lines.filter((l) => l.msg === 'address blocked').map((l) => l.address);
  const startEngine = (
    options: {
      now?: () => number;
      decisions?: DecisionsStore;
      cleanUpIntervalMs?: number;
      /** Runs only while `decisions.lease()` says this engine holds the lease (as on NATS). */
      lease?: { holder: string; ttlMs: number };
    } = {},
  ) => {
    const engine = startDecisionEngine({
      store: {
        outputs: store.outputs,
        reader: store.reader,
        decisions: options.decisions ?? store.decisions,
      },
      blocklist: config.blocklist,
      logger,
      ...(options.now ? { now: options.now } : {}),
      ...(options.cleanUpIntervalMs === undefined ? {} : { cleanUpIntervalMs: options.cleanUpIntervalMs }),
      ...(options.lease ? { lease: options.lease } : {}),
    });
    t.after(() => engine.stop());
    return engine;
  };
  return { config, logger, store, log, blocked, lines, startEngine };
}

/** A feed `name` whose Basic password is `password`, serving every block (no cap). */
export function feedChange(name: string, password: string, format: FeedFormat = 'plain'): DecisionChange {
  return {
    kind: 'feed',
    key: name,
    value: {
      name,
      format,
      passwordHash: hashKey(password),
      maxEntries: null,
      family: 'any',
      createdAt: new Date().toISOString(),
      rotatedAt: null,
    },
  };
}

/** A block of `address` (a canonical CIDR: its key) from `since` to `until` (ms), by hand unless `fields` say. */
export function blockChange(
  address: string,
  since: number,
  until: number,
  fields: Partial<Block> = {},
): DecisionChange {
  const value: Block = {
    address,
    rule: 'manual',
    reason: 'by hand',
    since: new Date(since).toISOString(),
    until: new Date(until).toISOString(),
    criticality: 4,
    records: 0,
    sensors: [],
    who: 'alice',
    ...fields,
  };
  return { kind: 'block', key: address, value };
}

/** `Authorization` for a feed's Basic credentials. */
export function feedAuthorization(name: string, password: string): string {
  return `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;
}
