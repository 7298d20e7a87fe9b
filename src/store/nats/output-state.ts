// An output's bookkeeping beside its consumer, in the KV bucket `nats.outputsBucket`: the last acknowledged
// record (a consumer knows sequences, not record ids) and the records retention removed before the output
// passed them (JetStream moves a consumer past them silently; threatcol counts them).
import type { KV, KvEntry } from '@nats-io/kv';
import { encodeToken } from './names.js';

export interface AckedState {
  lastId: string;
  /** Stream sequence of that record. */
  seq: number;
  /** When it was acknowledged (ISO 8601). */
  at: string;
}

export interface SkippedState {
  /** Records counted as skipped so far. */
  records: number;
  /** Every stream sequence up to this one has been looked at (no range is counted twice). */
  throughSeq: number;
}

export const ackedKey = (output: string) => `${encodeToken(output)}.acked`;
export const skippedKey = (output: string) => `${encodeToken(output)}.skipped`;

const NO_SKIPS: SkippedState = { records: 0, throughSeq: 0 };
/** Compare-and-set rounds before giving up (only collectors of one output race here). */
const CAS_ATTEMPTS = 8;

function live(entry: KvEntry | null): KvEntry | null {
  return entry && entry.operation === 'PUT' ? entry : null;
}

export async function readOutputState(
  kv: KV,
  output: string,
): Promise<{ acked: AckedState | null; skipped: SkippedState }> {
  const [acked, skipped] = await Promise.all([kv.get(ackedKey(output)), kv.get(skippedKey(output))]);
  return {
    acked: live(acked)?.json<AckedState>() ?? null,
    skipped: live(skipped)?.json<SkippedState>() ?? NO_SKIPS,
  };
}

/** Last writer wins: with collectors sharing an output, the last acknowledged batch of any of them. */
export async function recordAcked(kv: KV, output: string, state: AckedState): Promise<void> {
  await kv.put(ackedKey(output), JSON.stringify(state));
}

/**
 * Counts the stream sequences in (afterSeq, throughSeq] that were not counted before as skipped; resolves with
 * how many this call added. Compare-and-set, so two collectors seeing the same gap count it once.
 */
export async function countSkipped(
  kv: KV,
  output: string,
  afterSeq: number,
  throughSeq: number,
): Promise<number> {
  const key = skippedKey(output);
  for (let attempt = 1; ; attempt++) {
    const entry = live(await kv.get(key));
    const before = entry?.json<SkippedState>() ?? NO_SKIPS;
    const added = throughSeq - Math.max(afterSeq, before.throughSeq);
    if (added <= 0) return 0;
    const next = JSON.stringify({ records: before.records + added, throughSeq } satisfies SkippedState);
    try {
      if (entry) await kv.update(key, next, entry.revision);
      else await kv.create(key, next);
      return added;
    } catch (error) {
      if (attempt >= CAS_ATTEMPTS) throw error;
    }
  }
}

/** Skipped sequences in (afterSeq, throughSeq] not yet counted (what list() adds before a feed counts them). */
export function uncounted(skipped: SkippedState, afterSeq: number, throughSeq: number): number {
  return Math.max(0, throughSeq - Math.max(afterSeq, skipped.throughSeq));
}

export async function forgetOutputState(kv: KV, output: string): Promise<void> {
  await Promise.all([kv.purge(ackedKey(output)), kv.purge(skippedKey(output))]);
}
