// The silence watcher's Prometheus series: which watched sensors are silent, and how long ago each active
// sensor's last record was accepted (what an alert rule of one's own compares with its interval).
import { Gauge, type Registry } from 'prom-client';
import type { SilenceWatcher } from './silence-watcher.js';

export function registerSilenceMetrics(
  registry: Registry,
  watcher: () => SilenceWatcher | null,
  now: () => number = Date.now,
): void {
  new Gauge({
    name: 'threatcol_sensor_silent',
    help: 'a sensor with an expected interval (sensor set --expect-every) is silent (1) or not (0)',
    labelNames: ['sensor'],
    registers: [registry],
    collect(this: Gauge) {
      this.reset();
      for (const s of watcher()?.watched() ?? []) this.set({ sensor: s.sensor }, s.silent ? 1 : 0);
    },
  });
  new Gauge({
    name: 'threatcol_sensor_last_seen_seconds',
    help: "seconds since the sensor's last accepted record, on any collector sharing the store",
    labelNames: ['sensor'],
    registers: [registry],
    collect(this: Gauge) {
      this.reset();
      const at = now();
      for (const [sensor, ms] of watcher()?.lastAccepted() ?? []) {
        this.set({ sensor }, Math.max(0, Math.round((at - ms) / 100) / 10));
      }
    },
  });
}
