// Opens the configured store for one CLI command and releases it when the command is done.
import type { LoadedConfig } from '../config/load-config.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';
import { type CliIo, logStream } from './io.js';

export async function withStore<T>(
  loaded: LoadedConfig,
  io: CliIo,
  use: (store: Store) => Promise<T>,
): Promise<T> {
  // Imported here, not at the top: a command's definition is loaded for every command line (main.ts).
  const [{ createLogger }, { openStore }] = await Promise.all([
    import('../log.js'),
    import('../store/open-store.js'),
  ]);
  // Only what the operator must see (an unreachable NATS server, a torn segment) reaches stderr.
  const logger = lazyLogger(() =>
    createLogger({ level: 'warn', format: 'auto', stream: logStream(io.stderr), isTty: io.stderr.isTTY }),
  );
  const store = await openStore(loaded.config, { dataDir: loaded.dataDir, logger });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** withStore for a read Ctrl-C may stop (`threats search`, `source show`): an interrupted read ends with 0. */
export async function readStore(
  loaded: LoadedConfig,
  io: CliIo,
  use: (store: Store, signal: AbortSignal) => Promise<number>,
): Promise<number> {
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  try {
    return await withStore(loaded, io, (store) => use(store, stop.signal));
  } catch (error) {
    // Ctrl-C ends the read quietly, like `threats tail`.
    if (stop.signal.aborted) return 0;
    throw error;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/** The stderr line when the look-up's bound (store/search-records.ts) stopped a read before its window's start. */
export function boundedNote(bounded: { maxRecords: number; maxBytes: number }, advice: string): string {
  const mib = Math.round(bounded.maxBytes / 1048576);
  return `stopped after reading back ${bounded.maxRecords} records or ${mib} MiB (the look-up's bound): ${advice}\n`;
}

/** The logger, made (and pino loaded) at its first use: most commands log nothing. */
function lazyLogger(make: () => Logger): Logger {
  let real: Logger | undefined;
  const logger = () => {
    real ??= make();
    return real;
  };
  return new Proxy({} as Logger, {
    get(_target, prop) {
      const value: unknown = Reflect.get(logger(), prop);
      return typeof value === 'function' ? value.bind(logger()) : value;
    },
    set: (_target, prop, value) => Reflect.set(logger(), prop, value),
  });
}
