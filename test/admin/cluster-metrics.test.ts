// With --workers the primary serves /metrics for all workers (DESIGN 10/11): the combination it applies sums
// counters and histograms across processes and keeps the latest sensor last-seen, not their sum.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { aggregateMetrics, createMetrics } from '../../src/metrics/metrics.js';
import { parseExposition, sampleValue } from '../helpers/prometheus.js';

test('workers metrics combined: counters and histograms summed, last seen by max, still strict exposition', async () => {
  const a = createMetrics({ processMetrics: false });
  const b = createMetrics({ processMetrics: false });
  const t0 = a.now();
  a.requestDone('firewall', 'OK', t0);
  a.requestDone('firewall', 'OK', t0);
  b.requestDone('firewall', 'OK', t0);
  b.requestDone('generic', 'VALIDATION_FAILED', t0);
  a.recordsAccepted('fw-1', 'firewall', 10, 1_700_000_000_000);
  b.recordsAccepted('fw-1', 'firewall', 5, 1_700_000_100_000);
  a.batchSynced(10, 0.002);
  b.batchSynced(5, 0.004);
  a.sources({ connectionsOpen: () => 3, queuedRecords: () => 7 });
  b.sources({ connectionsOpen: () => 4, queuedRecords: () => 1 });

  const text = await aggregateMetrics([
    await a.registry.getMetricsAsJSON(),
    await b.registry.getMetricsAsJSON(),
  ]);
  const f = parseExposition(text);
  assert.equal(sampleValue(f, 'threatcol_requests_total', { endpoint: 'firewall', code: 'OK' }), 3);
  assert.equal(
    sampleValue(f, 'threatcol_requests_total', { endpoint: 'generic', code: 'VALIDATION_FAILED' }),
    1,
  );
  assert.equal(
    sampleValue(f, 'threatcol_records_accepted_total', { sensor: 'fw-1', endpoint: 'firewall' }),
    15,
  );
  assert.equal(
    sampleValue(f, 'threatcol_sensor_last_seen_timestamp_seconds', { sensor: 'fw-1' }),
    1_700_000_100,
  );
  assert.equal(sampleValue(f, 'threatcol_store_batch_records_sum'), 15);
  assert.equal(sampleValue(f, 'threatcol_store_batch_records_count'), 2);
  assert.equal(sampleValue(f, 'threatcol_request_duration_seconds_count', { endpoint: 'firewall' }), 3);
  assert.equal(sampleValue(f, 'threatcol_connections_open'), 7);
  assert.equal(sampleValue(f, 'threatcol_store_queue_records'), 8);
});
