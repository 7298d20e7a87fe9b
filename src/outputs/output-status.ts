// What an output is doing, for `outputs list`, the admin API, metrics and /readyz: its state, last success and
// error, and counters since the daemon started.

export type OutputState = 'starting' | 'running' | 'retrying' | 'paused' | 'disabled' | 'removed';

export interface OutputStatus {
  name: string;
  type: string;
  state: OutputState;
  lastSuccessAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  /** Epoch ms since when the output has failed without a success in between (null: not failing). */
  failingSince: number | null;
  recordsSent: number;
  batches: number;
  retries: number;
  deadLetters: number;
  /** Records of new groups past `group.maxGroups`, counted in the overflow group (grouped outputs). */
  groupOverflow: number;
  /** Records counted in group summaries the receiver refused for good (their samples are dead-lettered). */
  groupRefused: number;
}

export function newStatus(name: string, type: string, state: OutputState): OutputStatus {
  return {
    name,
    type,
    state,
    lastSuccessAt: null,
    lastError: null,
    lastErrorAt: null,
    failingSince: null,
    recordsSent: 0,
    batches: 0,
    retries: 0,
    deadLetters: 0,
    groupOverflow: 0,
    groupRefused: 0,
  };
}

/** An output failing this long turns /readyz detail and `check` to a warning (DESIGN 13): the one home of it. */
export const FAILING_WARN_MS = 60_000;

/** /readyz's warning for an output failing over FAILING_WARN_MS; null when it is not. */
export function failingWarning(status: OutputStatus, now: number): string | null {
  if (status.failingSince === null || now - status.failingSince <= FAILING_WARN_MS) return null;
  const seconds = Math.round((now - status.failingSince) / 1000);
  return `output ${status.name} has failed for ${seconds} s: ${status.lastError}`;
}
