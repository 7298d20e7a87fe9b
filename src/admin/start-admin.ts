// Starts the admin listener for a collector: the daemon calls it in a single process; with --workers the
// primary calls it with `renderMetrics` aggregating its workers (metrics/metrics.ts,
// clusterMetricsRenderer).
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { type AdminAddress, adminUrl, parseAdminListen } from '../config/admin-address.js';
import type { BlocklistConfig } from '../config/blocklist-schema.js';
import type { Config } from '../config/schema.js';
import { ThreatcolError } from '../errors.js';
import type { DecisionsStore } from '../store/decisions.js';
import type { Store } from '../store/store.js';
import { type AdminServer, createAdminServer } from './admin-server.js';
import { createBlocklistView } from './blocklist-panel.js';
import { createLiveFeed } from './live-feed.js';

export interface AdminOptions {
  config: Config;
  logger: Logger;
  store: Pick<Store, 'reader' | 'stats' | 'registry' | 'health'>;
  /**
   * Read only, for the Blocklist panel: the process's one watched copy of the decisions (shareDecisionsWatch in
   * decisions/watched-decisions.ts), which the engine and the feeds read too.
   */
  decisions: Pick<DecisionsStore, 'watch'>;
  now?: () => number;
  /** Reasons not to send traffic here besides the store's health (stopping, a failed writer). */
  extraNotReady(): string[];
  renderMetrics(): Promise<{ contentType: string; body: string }>;
  /** The outputs' status for `GET /api/outputs` and `outputs list` (DESIGN 13); absent: none run here. */
  outputs?: () => Promise<OutputSummary[]>;
  /** blocklist as configured now: the caller follows reloads (the daemon, or the primary of --workers). */
  blocklist: () => BlocklistConfig;
  /** One sensor's syslog counters and unreadable messages for `GET /api/syslog-errors`; absent: no syslog here. */
  syslogErrors?: (sensor: string) => unknown;
}

/** What the admin listener needs of an output's status: its name and the warning it gives, if any. */
export interface OutputSummary {
  name: string;
  /** Set by the output when it has failed long enough to warn: a line of /readyz's detail, never its status. */
  warning: string | null;
}

export interface RunningAdmin {
  address: AddressInfo;
  close(): Promise<void>;
}

/** null when admin.listen is ""; throws LISTEN_FAILED naming admin.listen (exit 69) when it cannot listen. */
export async function startAdminListener(options: AdminOptions): Promise<RunningAdmin | null> {
  const { config, logger, store } = options;
  // Validated by the config loader: throws only on a configuration that bypassed it.
  const at = parseAdminListen(config.admin.listen);
  if (at === null) return null;
  const admin: AdminServer = createAdminServer({
    address: at,
    token: config.admin.token,
    logger,
    store,
    feed: createLiveFeed({ reader: store.reader, logger, ...(options.now ? { now: options.now } : {}) }),
    defaultTimezone: config.firewall.defaultTimezone,
    blocklist: createBlocklistView({
      decisions: options.decisions,
      blocklist: options.blocklist,
      logger,
    }),
    ...(options.now ? { now: options.now } : {}),
    async notReadyReasons() {
      const extra = options.extraNotReady();
      // Every reason, the store's included (it names an unreachable NATS server).
      const health = await store.health();
      return health.ok ? extra : [...extra, health.reason ?? 'the store does not accept writes'];
    },
    renderMetrics: options.renderMetrics,
    outputs: async () => (options.outputs ? options.outputs() : []),
    syslogErrors: (sensor) => options.syslogErrors?.(sensor) ?? null,
    async warnings() {
      const outputs = options.outputs ? await options.outputs() : [];
      return outputs.flatMap((o) => (o.warning === null ? [] : [o.warning]));
    },
  });
  let address: AddressInfo;
  try {
    address = await admin.listen();
  } catch (error) {
    await admin.close();
    throw adminListenError(error as NodeJS.ErrnoException, at);
  }
  logger.info(
    {
      address: address.address,
      port: address.port,
      url: adminUrl(address.address, address.port),
      token: config.admin.token !== null,
    },
    'admin listener (dashboard, /metrics, /healthz, /readyz) is listening',
  );
  return { address, close: () => admin.close() };
}

/** DESIGN 11: an admin address in use stops serve with 69 and names the key to change. */
function adminListenError(error: NodeJS.ErrnoException, at: AdminAddress): ThreatcolError {
  const where = `${at.host}:${at.port}`;
  const hint =
    error.code === 'EADDRINUSE'
      ? 'already in use (another threatcol?): set admin.listen (THREATCOL_ADMIN_LISTEN) to a free port, or "" to turn the admin listener off'
      : `${error.code ?? error.message}: check admin.listen (THREATCOL_ADMIN_LISTEN)`;
  return new ThreatcolError('LISTEN_FAILED', `admin.listen: cannot listen on ${where}: ${hint}`, {
    cause: error,
  });
}
