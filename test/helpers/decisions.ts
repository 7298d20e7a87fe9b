// Decisions written straight through the store in tests: a feed with a known password, a block; the store of
// an in-process collector opened beside it.
import { pino } from 'pino';
import { hashKey } from '../../src/keys.js';
import type { Block, DecisionChange, FeedFormat } from '../../src/store/decisions.js';
import { openStore } from '../../src/store/open-store.js';
import type { TestServer } from './in-process-server.js';

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
