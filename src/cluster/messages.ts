// The IPC messages between the primary and its workers (`serve --workers`). Every message carries
// `tc: <kind>`, so messages of other modules on the same channel (prom-client's aggregator) pass by.

import type { LoadedConfig } from '../config/load-config.js';
import type { OutputConfig } from '../config/outputs-schema.js';
import type { SyslogTallyDelta } from '../inputs/syslog/syslog-tally.js';

/** Per-sensor counters a worker gathered since its last report. */
export interface StatsDelta {
  sensor: string;
  accepted: number;
  rejected: number;
  last_accepted_at: string | null;
  last_address: string | null;
  last_rejection_code: string | null;
  last_rejected_at: string | null;
}

export type WorkerMessage =
  /** A starting worker asks for the configuration it is to run (answered with `config`). */
  | { tc: 'config-request' }
  /** The worker listens; `address` is the shared listener's. */
  | { tc: 'listening'; address: { address: string; family: string; port: number } }
  | { tc: 'stats'; deltas: StatsDelta[] }
  /** The syslog counts, refusals and unreadable samples since the worker's last report. */
  | { tc: 'syslog-tally'; delta: SyslogTallyDelta }
  /**
   * A new connection from an address group; the primary answers only a close (`conn-refused`), of it or of an
   * older connection it made room from (on any listener: HTTPS and syslog count in one table, as in a single
   * process).
   */
  | { tc: 'conn-open'; conn: number; group: string }
  /** The connection proved who it is (connection-slots.ts): the primary never closes it for a newcomer. */
  | { tc: 'conn-proven'; conn: number }
  | { tc: 'conn-close'; conn: number }
  /** Asks for rate-limit tokens for a sensor: at least `need`, up to `want`. */
  | { tc: 'lease'; req: number; sensor: string; need: number; want: number }
  /** The TLS material this worker serves after a reload (for the primary's log and the expiry warning). */
  | { tc: 'reloaded'; sha256: string }
  /** Claims the dedupe keys of an append (null: a record never deduplicated) in the primary's window. */
  | { tc: 'dedupe-claim'; req: number; keys: (string | null)[]; ids: string[] }
  /** The claimed append is durable (`error` null) or failed. */
  | { tc: 'dedupe-settle'; req: number; error: string | null };

export type PrimaryMessage =
  /**
   * The configuration the primary runs (the start's, with the live parts as last applied): a worker runs it,
   * never the file as it is now, which may hold edits not applied or be broken.
   */
  | { tc: 'config'; loaded: LoadedConfig }
  /** SIGHUP (or a changed certificate file): the registry and the certificate again, and `loaded`'s live parts. */
  | { tc: 'reload'; loaded: LoadedConfig }
  /** The outputs the primary runs, at a worker's start and at each reload (files: worker 1's retention holds for them). */
  | { tc: 'outputs'; outputs: Record<string, OutputConfig> }
  | { tc: 'stop' }
  /** Close this connection: over a cap, or the oldest not yet proven, making room for a newcomer. */
  /** `evicted`: an older connection closed to make room for a newcomer (else the newcomer itself, refused). */
  | { tc: 'conn-refused'; conn: number; evicted?: true }
  /** `granted` tokens (0: none, retry after `retryAfter` s). */
  | { tc: 'lease-reply'; req: number; granted: number; retryAfter: number }
  /** Per record, the id stored first (a duplicate) or null (the worker stores it); or why it cannot. */
  | { tc: 'dedupe-claimed'; req: number; firstIds: (string | null)[] }
  | { tc: 'dedupe-claimed'; req: number; error: string };

export function isWorkerMessage(message: unknown): message is WorkerMessage {
  return (
    typeof message === 'object' && message !== null && typeof (message as { tc?: unknown }).tc === 'string'
  );
}

export function isPrimaryMessage(message: unknown): message is PrimaryMessage {
  return isWorkerMessage(message);
}
