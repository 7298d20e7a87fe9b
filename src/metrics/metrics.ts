// Prometheus metrics (DESIGN 11): plain counters and histogram arrays the request path bumps without hashing
// labels or allocating, turned into prom-client series only when /metrics is scraped.
import { performance } from 'node:perf_hooks';
import {
  AggregatorRegistry,
  Counter,
  collectDefaultMetrics,
  Gauge,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client';
import { CATALOGUE } from '../errors.js';
import { createFastHistogram } from './fast-histogram.js';

/** The `endpoint` label: the two routes, and "other" for anything else that reached the listener. */
export type EndpointLabel = 'firewall' | 'generic' | 'other';
const ENDPOINTS: readonly EndpointLabel[] = ['firewall', 'generic', 'other'];
/** The `code` label: a catalogue code that reaches HTTP, or OK for a 200. */
const CODES = [
  'OK',
  ...Object.keys(CATALOGUE).filter((c) => CATALOGUE[c as keyof typeof CATALOGUE].status > 0),
];
const CODE_INDEX = new Map(CODES.map((c, i) => [c, i]));
const statusOf = (code: string) =>
  code === 'OK' ? '200' : String(CATALOGUE[code as keyof typeof CATALOGUE]?.status ?? 500);

/** What the request path and the store call. Every method is O(1) and allocation-free once warm. */
export interface CollectorMetrics {
  /** performance.now() at the start of a request, for `requestDone`. */
  now(): number;
  requestDone(endpoint: EndpointLabel, code: string, startedAt: number): void;
  recordsAccepted(sensor: string, endpoint: 'firewall' | 'generic', records: number, atMs: number): void;
  recordsDuplicate(records: number): void;
  sensorSeen(sensor: string, atMs: number): void;
  tlsHandshakeFailed(reason: string): void;
  batchSynced(records: number, seconds: number): void;
  /** Gauges read at scrape time (connections open, records waiting for disk). */
  sources(sources: { connectionsOpen?: () => number; queuedRecords?: () => number }): void;
}

export interface Metrics extends CollectorMetrics {
  /** threatcol_* only; `registries` adds the process metrics. */
  readonly registry: Registry;
  /** What /metrics shows: the process metrics (when asked for) and threatcol_*. */
  readonly registries: Registry[];
  render(): Promise<{ contentType: string; body: string }>;
}

let processRegistry: Registry | null = null;
/**
 * Node's default process metrics, collected once per process (they watch GC and the event loop for the
 * process, whatever number of collectors it runs, e.g. in tests).
 */
function processMetrics(): Registry {
  if (processRegistry === null) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

interface SensorCounts {
  firewall: number;
  generic: number;
  lastSeenMs: number;
}

/** Sensor names are bounded by the registry (only authenticated requests count), reasons by the classifier. */
export function createMetrics(options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  const registries = options.processMetrics === false ? [registry] : [processMetrics(), registry];
  const requests = new Float64Array(ENDPOINTS.length * CODES.length);
  const sensors = new Map<string, SensorCounts>();
  const tlsFailures = new Map<string, number>();
  let duplicates = 0;
  let connectionsOpen: () => number = () => 0;
  let queuedRecords: () => number = () => 0;

  new Counter({
    name: 'threatcol_requests_total',
    help: 'HTTP requests answered on the sensors port, by endpoint, status and error code (OK for 200)',
    labelNames: ['endpoint', 'status', 'code'],
    registers: [registry],
    collect() {
      this.reset();
      for (let e = 0; e < ENDPOINTS.length; e++) {
        for (let c = 0; c < CODES.length; c++) {
          const n = requests[e * CODES.length + c] as number;
          const code = CODES[c] as string;
          // Every endpoint/OK pair is always present, so a rate() starts from zero; errors once seen.
          if (n > 0 || code === 'OK') {
            this.inc({ endpoint: ENDPOINTS[e] as string, status: statusOf(code), code }, n);
          }
        }
      }
    },
  });
  new Counter({
    name: 'threatcol_records_accepted_total',
    help: 'records stored, by sensor and endpoint',
    labelNames: ['sensor', 'endpoint'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [sensor, s] of sensors) {
        if (s.firewall > 0) this.inc({ sensor, endpoint: 'firewall' }, s.firewall);
        if (s.generic > 0) this.inc({ sensor, endpoint: 'generic' }, s.generic);
      }
    },
  });
  new Counter({
    name: 'threatcol_records_duplicate_total',
    help: 'records of retried deliveries answered with the first ids instead of being stored again',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(duplicates);
    },
  });
  new Counter({
    name: 'threatcol_tls_handshake_failures_total',
    help: 'TLS handshakes that failed on the sensors port, by reason',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, n] of tlsFailures) this.inc({ reason }, n);
    },
  });
  new Gauge({
    name: 'threatcol_connections_open',
    help: "connections open on the sensors' listeners (HTTPS and syslog; the admin listener apart)",
    registers: [registry],
    collect() {
      this.set(connectionsOpen());
    },
  });
  new Gauge({
    name: 'threatcol_store_queue_records',
    help: 'records accepted by the store and not yet durable',
    registers: [registry],
    collect() {
      this.set(queuedRecords());
    },
  });
  new Gauge({
    name: 'threatcol_sensor_last_seen_timestamp_seconds',
    help: 'when a request of this sensor was last authenticated (Unix seconds)',
    labelNames: ['sensor'],
    registers: [registry],
    aggregator: 'max',
    collect() {
      this.reset();
      for (const [sensor, s] of sensors) if (s.lastSeenMs > 0) this.set({ sensor }, s.lastSeenMs / 1000);
    },
  });
  const duration = createFastHistogram({
    name: 'threatcol_request_duration_seconds',
    help: 'time from the request reaching a route to its answer being written, by endpoint',
    label: { name: 'endpoint', values: ENDPOINTS },
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registry,
  });
  const sync = createFastHistogram({
    name: 'threatcol_store_sync_duration_seconds',
    help: 'time to make one batch durable (fdatasync, or the publish acks)',
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registry,
  });
  const batch = createFastHistogram({
    name: 'threatcol_store_batch_records',
    help: 'records made durable together in one batch (group commit)',
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000],
    registry,
  });

  const sensorEntry = (sensor: string): SensorCounts => {
    let s = sensors.get(sensor);
    if (s === undefined) {
      s = { firewall: 0, generic: 0, lastSeenMs: 0 };
      sensors.set(sensor, s);
    }
    return s;
  };

  return {
    registry,
    registries,
    async render() {
      const merged = Registry.merge(registries);
      return { contentType: merged.contentType, body: await merged.metrics() };
    },
    now: () => performance.now(),
    requestDone(endpoint, code, startedAt) {
      const e = endpoint === 'firewall' ? 0 : endpoint === 'generic' ? 1 : 2;
      const c = CODE_INDEX.get(code) ?? (CODE_INDEX.get('INTERNAL') as number);
      requests[e * CODES.length + c] = (requests[e * CODES.length + c] as number) + 1;
      duration.observe(e, (performance.now() - startedAt) / 1000);
    },
    recordsAccepted(sensor, endpoint, records, atMs) {
      const s = sensorEntry(sensor);
      s[endpoint] += records;
      s.lastSeenMs = atMs;
    },
    recordsDuplicate(records) {
      duplicates += records;
    },
    sensorSeen(sensor, atMs) {
      sensorEntry(sensor).lastSeenMs = atMs;
    },
    tlsHandshakeFailed(reason) {
      tlsFailures.set(reason, (tlsFailures.get(reason) ?? 0) + 1);
    },
    batchSynced(records, seconds) {
      batch.observe(0, records);
      sync.observe(0, seconds);
    },
    sources(s) {
      if (s.connectionsOpen) connectionsOpen = s.connectionsOpen;
      if (s.queuedRecords) queuedRecords = s.queuedRecords;
    },
  };
}

/**
 * --workers, in each worker: answer the primary's requests for metrics with this worker's registry
 * (prom-client's cluster messages over the IPC channel node:cluster already has).
 */
export function shareMetricsWithPrimary(metrics: Metrics): void {
  // prom-client installs the worker's answering listener only in AggregatorRegistry's constructor.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries(metrics.registries);
}

/**
 * --workers, in the primary: /metrics as the workers' metrics combined (counters and histograms summed,
 * sensor last-seen by max), one exposition as if from one process. Call once; pass to startAdminListener.
 */
export function clusterMetricsRenderer(): () => Promise<{ contentType: string; body: string }> {
  const aggregator = new AggregatorRegistry();
  return async () => ({ contentType: aggregator.contentType, body: await aggregator.clusterMetrics() });
}

/** The combination clusterMetricsRenderer applies, on metrics already collected (for tests and tools). */
export function aggregateMetrics(
  perProcess: MetricObjectWithValues<MetricValue<string>>[][],
): Promise<string> {
  return AggregatorRegistry.aggregate(perProcess).metrics();
}
