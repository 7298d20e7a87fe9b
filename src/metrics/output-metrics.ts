// Per-output Prometheus series (DESIGN 13): records sent, batches, retries, dead letters, lag in records and
// seconds, read from the outputs' status at scrape time.
import { Counter, Gauge, type Registry } from 'prom-client';

export interface OutputMetricRow {
  output: string;
  recordsSent: number;
  batches: number;
  retries: number;
  deadLetters: number;
  /** Records of new groups past group.maxGroups (grouped alert outputs), counted in one overflow group. */
  groupOverflow: number;
  groupRefused: number;
  lagRecords: number;
  lagSeconds: number;
}

/** Registers the series on `registry`; `rows` is called once per scrape. */
export function registerOutputMetrics(registry: Registry, rows: () => Promise<OutputMetricRow[]>): void {
  let pending: Promise<OutputMetricRow[]> | null = null;
  // The series read one snapshot per scrape, not one each.
  const snapshot = () => {
    pending ??= rows().finally(() => {
      setImmediate(() => {
        pending = null;
      });
    });
    return pending;
  };
  const series: [string, string, 'counter' | 'gauge', keyof Omit<OutputMetricRow, 'output'>][] = [
    [
      'threatcol_output_records_sent_total',
      'records an output delivered and its receiver acknowledged',
      'counter',
      'recordsSent',
    ],
    ['threatcol_output_batches_total', 'batches an output delivered', 'counter', 'batches'],
    ['threatcol_output_retries_total', 'failed delivery attempts retried', 'counter', 'retries'],
    [
      'threatcol_output_dead_letters_total',
      'records the receiver refused for good (dead-lettered)',
      'counter',
      'deadLetters',
    ],
    [
      'threatcol_output_group_overflow_total',
      'records of new groups past group.maxGroups, counted in one overflow group',
      'counter',
      'groupOverflow',
    ],
    [
      'threatcol_output_group_refused_records_total',
      'records counted in group summaries the receiver refused for good',
      'counter',
      'groupRefused',
    ],
    ['threatcol_output_lag_records', 'records stored after the output position', 'gauge', 'lagRecords'],
    [
      'threatcol_output_lag_seconds',
      'age of the oldest record the output has not delivered',
      'gauge',
      'lagSeconds',
    ],
  ];
  for (const [name, help, kind, field] of series) {
    const config = {
      name,
      help,
      labelNames: ['output'],
      registers: [registry],
      async collect(this: Counter | Gauge) {
        this.reset();
        for (const row of await snapshot()) {
          if (this instanceof Gauge) this.set({ output: row.output }, row[field]);
          else this.inc({ output: row.output }, row[field]);
        }
      },
    };
    if (kind === 'counter') new Counter(config);
    else new Gauge(config);
  }
}
