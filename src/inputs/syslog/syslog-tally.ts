// What the syslog input saw, per sensor and format (counters since the daemon started) and a bounded sample of
// each sensor's unreadable messages, for `sensor show --syslog-errors` and /metrics.

/** Totals over every sensor, for the log and tests. */
export interface SyslogCounts {
  threats: number;
  other: number;
  invalid: number;
  oversize: number;
}

/** One sensor's messages in one format. `truncated` counts messages over syslog.maxMessageBytes, cut or dropped. */
export interface SyslogFormatCounts {
  sensor: string;
  format: string;
  received: number;
  stored: number;
  other: number;
  invalid: number;
  truncated: number;
}

export type SyslogCountField = Exclude<keyof SyslogFormatCounts, 'sensor' | 'format'>;

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

/** Why threatcol closed a connection: no active sensor, over a connection cap, a RELP sender breaking the protocol. */
export type RefusalReason = 'no_sensor' | 'limit' | 'relp_protocol';

export class SyslogTally {
  readonly totals: SyslogCounts = { threats: 0, other: 0, invalid: 0, oversize: 0 };
  readonly refused: Record<RefusalReason, number> = { no_sensor: 0, limit: 0, relp_protocol: 0 };
  readonly #counts = new Map<string, SyslogFormatCounts>();
  // Ordered by last sample: the least recently failing sensor gives up its oldest samples first, so one noisy
  // sender cannot push the bound over SAMPLES_IN_ALL nor erase every other sensor's evidence at once.
  readonly #samples = new Map<string, SyslogErrorSample[]>();
  #sampleCount = 0;

  count(sensor: string, format: string, field: SyslogCountField, n = 1): void {
    const key = `${sensor}\u0000${format}`;
    let row = this.#counts.get(key);
    if (row === undefined) {
      row = { sensor, format, received: 0, stored: 0, other: 0, invalid: 0, truncated: 0 };
      this.#counts.set(key, row);
    }
    row[field] += n;
  }

  refuse(reason: RefusalReason): void {
    this.refused[reason]++;
  }

  /** Keeps `message` (cut to SAMPLE_BYTES) as the sensor's latest unreadable message. */
  sample(sensor: string, entry: Omit<SyslogErrorSample, 'bytes' | 'message'>, message: Buffer): void {
    const kept: SyslogErrorSample = {
      ...entry,
      bytes: message.length,
      message: message.subarray(0, SAMPLE_BYTES).toString('utf8'),
    };
    const list = this.#samples.get(sensor) ?? [];
    this.#samples.delete(sensor);
    this.#samples.set(sensor, list);
    list.push(kept);
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
