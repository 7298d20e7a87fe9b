// Applies a changed `outputs` section when the configuration file changes (SIGHUP re-reads the whole
// configuration instead: config-reload.ts, with the outputs as one of its live parts).
// A file that does not load (a half-saved edit, a typo) changes nothing: the outputs keep running as they were.
import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/load-config.js';
import type { RunningOutputs } from '../outputs/start-outputs.js';
import { watchFiles } from '../watch-files.js';

/** How often the configuration file is polled besides being watched, and how long it must be quiet. */
const CONFIG_POLL_MS = 5000;
const CONFIG_DEBOUNCE_MS = 500;

/** Applies the outputs again whenever the configuration file changes (null: no file, nothing to watch). */
export function watchOutputsConfig(
  configPath: string | null,
  outputs: RunningOutputs,
  reread: (() => LoadedConfig) | undefined,
  logger: Logger,
): { stop(): void } {
  if (configPath === null || !reread) return { stop() {} };
  const watch = watchFiles({
    paths: [configPath],
    pollIntervalMs: CONFIG_POLL_MS,
    debounceMs: CONFIG_DEBOUNCE_MS,
    onChange: () => {
      logger.info({ config: configPath }, 'configuration file changed: applying its outputs');
      void applyOutputs(outputs, reread, logger);
    },
  });
  return { stop: () => watch.stop() };
}

async function applyOutputs(
  outputs: RunningOutputs,
  reread: () => LoadedConfig,
  logger: Logger,
): Promise<void> {
  try {
    await outputs.reload(reread().config.outputs);
  } catch (error) {
    logger.error(
      { err: (error as Error).message },
      'configuration not reloaded; the outputs keep running as they were',
    );
  }
}
