// A worker's per-sensor stats: counted in memory and sent to the primary, the single writer of
// sensor-stats.json, every interval and once more when the worker stops.
import type { SensorActivity, SensorStatsStore } from '../store/store.js';
import type { StatsDelta } from './messages.js';

export class IpcSensorStats implements SensorStatsStore {
  private pending = new Map<string, StatsDelta>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly send: (deltas: StatsDelta[]) => void) {}

  private entry(sensor: string): StatsDelta {
    let d = this.pending.get(sensor);
    if (!d) {
      d = {
        sensor,
        accepted: 0,
        rejected: 0,
        last_accepted_at: null,
        last_address: null,
        last_rejection_code: null,
        last_rejected_at: null,
      };
      this.pending.set(sensor, d);
    }
    return d;
  }

  recordAccepted(sensor: string, address: string, records: number, at: string): void {
    const d = this.entry(sensor);
    d.accepted += records;
    d.last_accepted_at = at;
    d.last_address = address;
  }

  recordRejected(sensor: string, address: string | null, code: string, at: string): void {
    const d = this.entry(sensor);
    d.rejected += 1;
    if (address !== null) d.last_address = address;
    d.last_rejection_code = code;
    d.last_rejected_at = at;
  }

  /** Workers do not read the stats: the CLI reads the primary's file. */
  read(): Promise<Record<string, SensorActivity>> {
    return Promise.reject(new Error('a worker does not read the sensor stats'));
  }

  /** The primary watches for silent sensors, not the workers. */
  readSilences(): Promise<never> {
    return Promise.reject(new Error('a worker does not read the silences'));
  }

  writeSilence(): Promise<never> {
    return Promise.reject(new Error('a worker does not write the silences'));
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => this.flush(), intervalMs);
    this.timer.unref();
  }

  /** Sends what was counted since the last report. */
  flush(): void {
    if (this.pending.size === 0) return;
    const deltas = [...this.pending.values()];
    this.pending = new Map();
    this.send(deltas);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.flush();
  }
}
