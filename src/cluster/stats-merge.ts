// Merges a worker's per-sensor counts into the primary's stats, the single writer of sensor-stats.json
// under `serve --workers` (the workers count in memory: cluster/ipc-stats.ts).
import type { SensorStatsStore } from '../store/store.js';
import type { StatsDelta } from './messages.js';

export function mergeStatsDelta(stats: SensorStatsStore, d: StatsDelta): void {
  const accepted = () => {
    if (d.accepted > 0 && d.last_accepted_at !== null) {
      stats.recordAccepted(d.sensor, d.last_address ?? '', d.accepted, d.last_accepted_at);
    }
  };
  const rejected = () => {
    for (let i = 0; i < d.rejected; i++) {
      stats.recordRejected(d.sensor, d.last_address, d.last_rejection_code ?? '', d.last_rejected_at ?? '');
    }
  };
  // The later of the two last, so that last seen and last address end as the worker's latest.
  if ((d.last_rejected_at ?? '') > (d.last_accepted_at ?? '')) {
    accepted();
    rejected();
  } else {
    rejected();
    accepted();
  }
}
