// Per-sensor activity (last seen, last address, records received, last rejection) for the files backend:
// counted in memory by the daemon and written to <dataDir>/sensor-stats.json every few seconds. Only the
// daemon writes it; the CLI reads it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SILENCES_FILE, STATS_FILE } from '../../data-dir/data-layout.js';
import { type Owner, writeFileAtomic } from '../../data-dir/file-owner.js';
import { toSensorActivity, toSensorSilence } from '../activity-shape.js';
import type { SensorActivity, SensorSilence, SensorStatsStore } from '../store.js';

export { STATS_FILE };

export interface StatsFile {
  updated_at: string;
  sensors: Record<string, SensorActivity>;
}

export function readStatsFile(dataDir: string): StatsFile {
  try {
    const data = JSON.parse(readFileSync(join(dataDir, STATS_FILE), 'utf8')) as StatsFile;
    if (data && typeof data.sensors === 'object' && data.sensors !== null) {
      // Sensor names such as "constructor" must be keys of their own, never inherited builtins; an entry that
      // is not an object is dropped, and fields of the wrong type reset (activity-shape.ts).
      const sensors: Record<string, SensorActivity> = Object.create(null);
      for (const [name, value] of Object.entries(data.sensors)) {
        const activity = toSensorActivity(value);
        if (activity) sensors[name] = activity;
      }
      return { ...data, sensors };
    }
  } catch {
    // Missing or unreadable stats are not worth failing over: they are rebuilt as records arrive.
  }
  return { updated_at: new Date(0).toISOString(), sensors: Object.create(null) };
}

export class SensorStats implements SensorStatsStore {
  /** Loaded at the first count: a reader (the CLI) never holds the file in memory. */
  private data: StatsFile | null = null;
  private dirty = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly dataDir: string,
    private readonly now: () => number = Date.now,
    /** The owner new files keep (the data directory's); resolved at the first write. */
    private readonly owner: () => Owner | null = () => null,
  ) {}

  private entry(sensor: string): SensorActivity {
    this.data ??= readStatsFile(this.dataDir);
    let e = Object.hasOwn(this.data.sensors, sensor) ? this.data.sensors[sensor] : undefined;
    if (!e) {
      e = { last_seen: null, last_address: null, records_received: 0, requests_rejected: 0 };
      this.data.sensors[sensor] = e;
    }
    return e;
  }

  recordAccepted(sensor: string, address: string, records: number, at: string): void {
    const e = this.entry(sensor);
    e.last_seen = at;
    e.last_accepted = at;
    e.last_address = address;
    e.records_received += records;
    this.dirty = true;
  }

  recordRejected(sensor: string, address: string | null, code: string, at: string): void {
    const e = this.entry(sensor);
    if (address !== null) {
      e.last_seen = at;
      e.last_address = address;
    }
    e.requests_rejected += 1;
    e.last_rejection_code = code;
    e.last_rejected_at = at;
    this.dirty = true;
  }

  async read(): Promise<Record<string, SensorActivity>> {
    const sensors = (this.data ?? readStatsFile(this.dataDir)).sensors;
    return Object.assign(Object.create(null), structuredClone({ ...sensors }));
  }

  start(intervalMs: number, onError: (error: Error) => void): void {
    this.timer = setInterval(() => {
      try {
        this.flush();
      } catch (error) {
        onError(error as Error);
      }
    }, intervalMs);
    this.timer.unref();
  }

  flush(): void {
    if (!this.dirty || !this.data) return;
    this.dirty = false;
    this.data.updated_at = new Date(this.now()).toISOString();
    writeFileAtomic(join(this.dataDir, STATS_FILE), `${JSON.stringify(this.data)}\n`, 0o640, this.owner());
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.flush();
  }

  async readSilences(): Promise<Record<string, SensorSilence>> {
    return readSilencesFile(this.dataDir);
  }

  async writeSilence(sensor: string, silence: SensorSilence | null): Promise<void> {
    const silences = readSilencesFile(this.dataDir);
    if (silence === null) {
      if (!Object.hasOwn(silences, sensor)) return;
      delete silences[sensor];
    } else silences[sensor] = { silent_since: silence.silent_since };
    writeFileAtomic(
      join(this.dataDir, SILENCES_FILE),
      `${JSON.stringify({ sensors: silences })}\n`,
      0o640,
      this.owner(),
    );
  }
}

/** <dataDir>/sensor-silences.json's silences; an entry without a time in silent_since is left out. */
function readSilencesFile(dataDir: string): Record<string, SensorSilence> {
  const silences: Record<string, SensorSilence> = Object.create(null);
  try {
    const data = JSON.parse(readFileSync(join(dataDir, SILENCES_FILE), 'utf8')) as { sensors?: unknown };
    if (typeof data?.sensors === 'object' && data.sensors !== null) {
      for (const [name, value] of Object.entries(data.sensors)) {
        const since = toSensorSilence(value);
        if (since) silences[name] = since;
      }
    }
  } catch {
    // None yet, or unreadable: no silence is known (the watcher reports one again if it lasts).
  }
  return silences;
}
