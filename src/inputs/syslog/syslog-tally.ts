// What the syslog input saw, per sensor and format (counters since the daemon started) and a bounded sample of
// each sensor's unreadable messages, for `sensor show --syslog-errors` and /metrics.

/** Totals over every sensor, for the log and tests. */
export interface SyslogCounts {
  threats: number;
  other: number;
  invalid: number;
  oversize: number;
}

/**
 * One sensor's messages in one format. `truncated` counts messages over syslog.maxMessageBytes, cut or dropped;
 * `incomplete` messages the connection ended inside of (lost, not in `received`).
 */
export interface SyslogFormatCounts {
  sensor: string;
  format: string;
  received: number;
  stored: number;
  other: number;
  invalid: number;
  truncated: number;
  incomplete: number;
}

export type SyslogCountField = Exclude<keyof SyslogFormatCounts, 'sensor' | 'format'>;
const COUNT_FIELDS: readonly SyslogCountField[] = [
  'received',
  'stored',
  'other',
  'invalid',
  'truncated',
  'incomplete',
];

/** An unreadable message as the operator sees it: why, from where, and its first bytes. */
export interface SyslogErrorSample {
  at: string;
  remoteAddr: string;
  format: string;
  reason: string;
  /** The message's length in bytes; `message` holds at most SAMPLE_BYTES of it. */
  bytes: number;
  message: string;
}

/** Samples kept per sensor (the latest), the bytes kept of each, and in all over every sensor. */
export const SAMPLES_PER_SENSOR = 20;
export const SAMPLE_BYTES = 1024;
export const SAMPLES_IN_ALL = 2000;

/**
 * Why threatcol closed a connection: no active sensor, over a connection cap, a RELP sender breaking the protocol,
 * its message the oldest unfinished one when the listeners' held bytes reached syslog.maxHeldBytes.
 */
export type RefusalReason = 'no_sensor' | 'limit' | 'relp_protocol' | 'memory';
const REFUSAL_REASONS: readonly RefusalReason[] = ['no_sensor', 'limit', 'relp_protocol', 'memory'];

/** What a tally gathered since it was last drained: how a `serve --workers` worker reports to the primary. */
export interface SyslogTallyDelta {
  rows: SyslogFormatCounts[];
  refused: Record<RefusalReason, number>;
  samples: [sensor: string, samples: SyslogErrorSample[]][];
}

export class SyslogTally {
  readonly totals: SyslogCounts = { threats: 0, other: 0, invalid: 0, oversize: 0 };
  readonly refused: Record<RefusalReason, number> = { no_sensor: 0, limit: 0, relp_protocol: 0, memory: 0 };
  readonly #counts = new Map<string, SyslogFormatCounts>();
  // Ordered by last sample: the least recently failing sensor gives up its oldest samples first, so one noisy
  // sender cannot push the bound over SAMPLES_IN_ALL nor erase every other sensor's evidence at once.
  readonly #samples = new Map<string, SyslogErrorSample[]>();
  #sampleCount = 0;
  #last: SyslogFormatCounts | undefined;

  count(sensor: string, format: string, field: SyslogCountField, n = 1): void {
    // The row counted last, found without its key: a connection counts each message two or three times, and
    // building the key string each time was garbage.
    let row = this.#last;
    if (row === undefined || row.sensor !== sensor || row.format !== format) {
      const key = `${sensor}\u0000${format}`;
      row = this.#counts.get(key);
      if (row === undefined) {
        row = { sensor, format, received: 0, stored: 0, other: 0, invalid: 0, truncated: 0, incomplete: 0 };
        this.#counts.set(key, row);
      }
      this.#last = row;
    }
    row[field] += n;
  }

  refuse(reason: RefusalReason): void {
    this.refused[reason]++;
  }

  /** Keeps `message` (cut to SAMPLE_BYTES) as the sensor's latest unreadable message. */
  sample(sensor: string, entry: Omit<SyslogErrorSample, 'bytes' | 'message'>, message: Buffer): void {
    this.#keep(sensor, {
      ...entry,
      bytes: message.length,
      message: message.subarray(0, SAMPLE_BYTES).toString('utf8'),
    });
  }

  /** Hands over and forgets the counts, refusals and samples gathered since the last drain; null: none. */
  drain(): SyslogTallyDelta | null {
    const refused = { ...this.refused };
    if (this.#counts.size === 0 && this.#samples.size === 0 && REFUSAL_REASONS.every((r) => refused[r] === 0))
      return null;
    const delta: SyslogTallyDelta = { rows: this.rows(), refused, samples: [...this.#samples] };
    this.#counts.clear();
    this.#last = undefined;
    this.#samples.clear();
    this.#sampleCount = 0;
    for (const reason of REFUSAL_REASONS) this.refused[reason] = 0;
    return delta;
  }

  /** Adds another tally's drained delta (the primary of `serve --workers` sums its workers'). */
  merge(delta: SyslogTallyDelta): void {
    for (const row of delta.rows) {
      for (const field of COUNT_FIELDS)
        if (row[field] > 0) this.count(row.sensor, row.format, field, row[field]);
    }
    // Every reason, by the list: a reason added later cannot be left out of what the workers report.
    for (const reason of REFUSAL_REASONS) this.refused[reason] += delta.refused[reason] ?? 0;
    for (const [sensor, samples] of delta.samples) for (const s of samples) this.#keep(sensor, s);
  }

  #keep(sensor: string, kept: SyslogErrorSample): void {
    const list = this.#samples.get(sensor) ?? [];
    this.#samples.delete(sensor);
    this.#samples.set(sensor, list);
    list.push(kept);
    // Workers' samples arrive a report at a time: kept in time order, so the oldest is the one dropped.
    if (list.length > 1 && (list.at(-2) as SyslogErrorSample).at > kept.at)
      list.sort((a, b) => a.at.localeCompare(b.at));
    this.#sampleCount++;
    if (list.length > SAMPLES_PER_SENSOR) {
      list.shift();
      this.#sampleCount--;
    }
    while (this.#sampleCount > SAMPLES_IN_ALL) {
      const [oldest, samples] = this.#samples.entries().next().value as [string, SyslogErrorSample[]];
      samples.shift();
      this.#sampleCount--;
      if (samples.length === 0) this.#samples.delete(oldest);
    }
  }

  rows(): SyslogFormatCounts[] {
    return [...this.#counts.values()];
  }

  /** One sensor's counters and samples, oldest sample first (what `GET /api/syslog-errors` answers). */
  report(sensor: string): { sensor: string; counts: SyslogFormatCounts[]; samples: SyslogErrorSample[] } {
    return {
      sensor,
      counts: this.rows().filter((r) => r.sensor === sensor),
      samples: [...(this.#samples.get(sensor) ?? [])],
    };
  }
}
