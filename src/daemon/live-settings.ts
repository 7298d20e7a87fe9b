// Which settings a reload applies without a restart, in one place for the daemon and the primary of
// `--workers`: the log level, the rate limits, the certificate and key paths (docs/operations.md lists them).
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { RunningOutputs } from '../outputs/start-outputs.js';
import type { ConfigReloader, LivePart } from './config-reload.js';

export interface LiveTargets {
  logger: Logger;
  /** The record bucket; absent in a worker, whose tokens are leased from the primary's. */
  setRecordRate?: (perSecond: number, burst: number) => void;
  /** The byte bucket; absent in the primary, whose workers each apply their own on the forwarded reload. */
  setByteRate?: (next: Config) => void;
  /** Reads the new pair and serves it; throws (the served one stays) when it cannot be used. */
  switchTls(certPath: string, keyPath: string): void;
}

export function applyLiveSettings(reloader: ConfigReloader, targets: LiveTargets): void {
  const { setRecordRate, setByteRate } = targets;
  reloader.onReload({
    keys: ['log.level'],
    apply: (_previous, next) => {
      targets.logger.level = next.log.level;
    },
  });
  reloader.onReload({
    keys: [
      ...(setRecordRate ? ['rateLimit.recordsPerSecond', 'rateLimit.burst'] : []),
      'rateLimit.bytesPerSecond',
    ],
    apply: (_previous, next) => {
      setRecordRate?.(next.rateLimit.recordsPerSecond, next.rateLimit.burst);
      setByteRate?.(next);
    },
  });
  reloader.onReload({
    keys: ['tls.cert', 'tls.key'],
    apply: (_previous, next) => {
      if (next.tls.cert === null || next.tls.key === null) {
        throw new Error('going back to the self-signed certificate takes a restart');
      }
      targets.switchTls(next.tls.cert, next.tls.key);
    },
  });
}

/** Outputs added, removed or changed take effect at once (outputs/start-outputs.ts); the others keep running. */
export function outputsLivePart(outputs: RunningOutputs, logger: Logger): LivePart {
  return {
    keys: ['outputs'],
    apply: (_previous, next) => {
      outputs.reload(next.outputs).catch((error: unknown) => {
        logger.error(
          { err: (error as Error).message },
          'outputs not reloaded; they keep running as they were',
        );
      });
    },
  };
}
