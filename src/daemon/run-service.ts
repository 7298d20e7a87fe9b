// Runs a started collector as a systemd service until it stops (Type=notify): READY=1 once its signal
// handlers are in place, SIGTERM/SIGINT stop it (STOPPING=1), SIGHUP reloads it (RELOADING=1, then READY=1),
// and a signal held during start-up is honoured once (SIGTERM/SIGINT: a clean stop, exit 0). The same for one process and for the primary of
// `serve --workers`.
import type { Logger } from 'pino';
import type { ReloadOutcome } from './config-reload.js';
import { createSdNotifier, monotonicUsec } from './sd-notify.js';
import { releaseStartupSignals } from './startup-signals.js';

/** What serve runs: the daemon (start-daemon.ts) or the primary of its workers (cluster/primary.ts). */
export interface Service {
  address: { address: string; port: number };
  /** SIGHUP: re-read the configuration, the registry and the TLS material. */
  reload(): ReloadOutcome;
  /** SIGTERM: finish in-flight requests and stop. */
  stop(): void;
  /** Resolves with the exit code once stopped. */
  done: Promise<number>;
}

export async function runService(
  service: Service,
  options: { env: Record<string, string | undefined>; logger: Logger },
): Promise<number> {
  const { logger } = options;
  const notifier = createSdNotifier({ env: options.env, logger });
  const stop = () => {
    void notifier.notify({ STOPPING: '1' });
    service.stop();
  };
  // RELOADING=1 with MONOTONIC_USEC, then READY=1: what systemd >= 253 expects (Type=notify-reload) and what
  // older ones show as "reloading"; the reload itself is synchronous.
  const listening = `listening on ${service.address.address} port ${service.address.port}`;
  const reload = () => {
    void notifier.notify({ RELOADING: '1', MONOTONIC_USEC: monotonicUsec() });
    const outcome = service.reload();
    // STATUS= is what `systemctl status` shows: a refused file or a pending restart stays visible there.
    void notifier.notify({ READY: '1', STATUS: reloadStatus(listening, outcome) });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('SIGHUP', reload);
  // Only now, with the handlers above in place, so that no signal falls between the two.
  const held = releaseStartupSignals();
  void notifier.notify({ READY: '1', STATUS: listening });
  const stopSignal = held.find((s) => s === 'SIGTERM' || s === 'SIGINT');
  if (stopSignal) {
    logger.info(`${stopSignal} received during start-up: stopping now`);
    stop();
  } else if (held.includes('SIGHUP')) {
    logger.info('SIGHUP received during start-up: reloading now');
    reload();
  }
  try {
    return await service.done;
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    process.off('SIGHUP', reload);
    await notifier.idle();
  }
}

/** The one-line status after a reload. */
export function reloadStatus(listening: string, outcome: ReloadOutcome): string {
  if (!outcome.ok) {
    return `${listening}; configuration NOT reloaded, the previous one stays in force: ${outcome.reason.replace(/\s+/g, ' ')}`;
  }
  if (outcome.restartNeeded.length > 0) {
    return `${listening}; configuration reloaded; restart to apply: ${outcome.restartNeeded.join(', ')}`;
  }
  return `${listening}; configuration reloaded`;
}
