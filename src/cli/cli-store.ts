// Opens the configured store for one CLI command and releases it when the command is done.
import type { LoadedConfig } from '../config/load-config.js';
import { createLogger } from '../log.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { type CliIo, logStream } from './io.js';

export async function withStore<T>(
  loaded: LoadedConfig,
  io: CliIo,
  use: (store: Store) => Promise<T>,
): Promise<T> {
  // Only what the operator must see (an unreachable NATS server, a torn segment) reaches stderr.
  const logger = createLogger({
    level: 'warn',
    format: 'auto',
    stream: logStream(io.stderr),
    isTty: io.stderr.isTTY,
  });
  const store = await openStore(loaded.config, { dataDir: loaded.dataDir, logger });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}
