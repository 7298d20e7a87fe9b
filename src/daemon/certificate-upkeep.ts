// What a serving process does once at start and then keeps doing for its certificate, in one home for the
// daemon and the primary of `--workers`: the data directory and the TLS material prepared, the file watch that
// reloads the pair, the expiry warnings, a reload on SIGHUP and a switch to other paths.
import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/load-config.js';
import { assertDataDirSafe } from '../data-dir/data-dir-safety.js';
import { ensureDataDir } from '../data-dir/ensure-data-dir.js';
import { loadTlsMaterial, readTlsPair, type TlsMaterial } from '../tls/tls-material.js';
import { watchTlsFiles } from '../tls/tls-watch.js';
import { type Chore, DAY_MS, startExpiryWarnings } from './maintenance.js';

/** The data directory (created, owner known, safe) and the TLS material (generated on the first start). */
export async function prepareDataDirAndTls(
  loaded: LoadedConfig,
  logger: Logger,
): Promise<{ owner: ReturnType<typeof ensureDataDir>; tls: TlsMaterial }> {
  const { config, dataDir } = loaded;
  const owner = ensureDataDir(dataDir);
  assertDataDirSafe(dataDir);
  const tls = await loadTlsMaterial(config.tls, dataDir, owner);
  if (tls.generated) {
    logger.info(
      { certificate: tls.certPath, sha256: tls.fingerprint },
      'generated a self-signed certificate',
    );
  }
  return { owner, tls };
}

export interface CertificateUpkeep {
  readonly tls: TlsMaterial;
  /** Reads the pair again (SIGHUP, a changed file); one that cannot be used is refused and the current stays. */
  reload(reason: string): void;
  /** Serves the pair at other paths (tls.cert/tls.key changed) and watches them; throws, changing nothing. */
  switchTo(certPath: string, keyPath: string): void;
  /** Changes the watch saw are covered by the reload that follows (SIGHUP). */
  accept(): void;
  stop(): void;
}

export interface UpkeepOptions {
  tls: TlsMaterial;
  logger: Logger;
  now: () => number;
  pollIntervalMs: number;
  debounceMs?: number;
  expiryCheckIntervalMs?: number;
  /** false in a `--workers` worker: the primary watches the files, warns of expiry and forwards reloads. */
  watch: boolean;
  /** Puts a new pair into service (the daemon: its listener). */
  serve(next: TlsMaterial): void;
  /** false in the primary: each worker logs what it serves or refuses. */
  report?: boolean;
  /** After each reload (the primary forwards it to its workers). */
  onReload?(reason: string): void;
}

const idle = { run() {}, stop() {}, accept() {} };

export function startCertificateUpkeep(options: UpkeepOptions): CertificateUpkeep {
  const { logger } = options;
  const report = options.report !== false;
  let tls = options.tls;
  const watchFiles = () =>
    options.watch
      ? watchTlsFiles({
          certPath: tls.certPath,
          keyPath: tls.keyPath,
          pollIntervalMs: options.pollIntervalMs,
          ...(options.debounceMs === undefined ? {} : { debounceMs: options.debounceMs }),
          onChange: () => reload('certificate or key file changed'),
        })
      : idle;
  let watch = watchFiles();
  const expiry: Chore = options.watch
    ? startExpiryWarnings({
        logger,
        now: options.now,
        intervalMs: options.expiryCheckIntervalMs ?? DAY_MS,
        certificate: () => tls,
      })
    : idle;

  function reload(reason: string): void {
    try {
      const next = readTlsPair(tls.certPath, tls.keyPath, tls.selfSigned);
      options.serve(next);
      tls = next;
      if (report) {
        logger.info(
          { reason, sha256: next.fingerprint, notAfter: next.notAfter },
          'reloaded the TLS material',
        );
      }
      expiry.run();
    } catch (error) {
      if (report) {
        logger.error(
          { reason, err: (error as Error).message, sha256: tls.fingerprint },
          'new TLS material refused; keeping the current certificate',
        );
      }
    }
    options.onReload?.(reason);
  }

  return {
    get tls() {
      return tls;
    },
    reload,
    switchTo(certPath, keyPath) {
      const next = readTlsPair(certPath, keyPath, false);
      options.serve(next);
      tls = next;
      watch.stop();
      watch = watchFiles();
      if (report) {
        logger.info(
          { reason: 'tls.cert or tls.key changed', sha256: next.fingerprint },
          'reloaded the TLS material',
        );
      }
      expiry.run();
    },
    accept: () => watch.accept(),
    stop() {
      watch.stop();
      expiry.stop();
    },
  };
}
