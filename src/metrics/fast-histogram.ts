// A Prometheus histogram whose observe() is a few array writes (no label hashing, no allocation), read by
// prom-client's Registry at scrape time through the same get() its own metrics have; the cluster
// aggregator sums it like any histogram.
import type { MetricObjectWithValues, MetricType, MetricValueWithName, Registry } from 'prom-client';

export interface FastHistogram {
  /** Records one value in series `series` (an index into the label values given at creation). */
  observe(series: number, value: number): void;
}

export function createFastHistogram(options: {
  name: string;
  help: string;
  buckets: readonly number[];
  /** One label and its values (one series each), or none (a single series, index 0). */
  label?: { name: string; values: readonly string[] };
  registry: Registry;
}): FastHistogram {
  const { name, buckets } = options;
  const seriesLabels: Record<string, string>[] = options.label
    ? options.label.values.map((v) => ({ [options.label?.name as string]: v }))
    : [{}];
  // Per series: one count per bucket (not cumulative; summed at scrape), then sum and count.
  const width = buckets.length + 2;
  const data = new Float64Array(seriesLabels.length * width);

  const metric = {
    name,
    help: options.help,
    type: 'histogram' as const,
    aggregator: 'sum' as const,
    // The shape prom-client's own histograms return from get(): what Registry and the aggregator read.
    async get(): Promise<Omit<MetricObjectWithValues<MetricValueWithName<string>>, 'collect'>> {
      const values: MetricValueWithName<string>[] = [];
      for (let s = 0; s < seriesLabels.length; s++) {
        const labels = seriesLabels[s] as Record<string, string>;
        const base = s * width;
        let cumulative = 0;
        for (let b = 0; b < buckets.length; b++) {
          cumulative += data[base + b] as number;
          values.push({
            metricName: `${name}_bucket`,
            labels: { ...labels, le: buckets[b] as number },
            value: cumulative,
          });
        }
        const count = data[base + buckets.length + 1] as number;
        values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: count });
        values.push({
          metricName: `${name}_sum`,
          labels: { ...labels },
          value: data[base + buckets.length] as number,
        });
        values.push({ metricName: `${name}_count`, labels: { ...labels }, value: count });
      }
      return {
        name,
        help: options.help,
        // prom-client types `type` as an enum it does not export at run time; the value is the string.
        type: 'histogram' as unknown as MetricType,
        values,
        aggregator: 'sum',
      };
    },
    reset() {
      data.fill(0);
    },
  };
  options.registry.registerMetric(metric as never);

  return {
    observe(series, value) {
      const base = series * width;
      for (let b = 0; b < buckets.length; b++) {
        if (value <= (buckets[b] as number)) {
          data[base + b] = (data[base + b] as number) + 1;
          break;
        }
      }
      data[base + buckets.length] = (data[base + buckets.length] as number) + value;
      data[base + buckets.length + 1] = (data[base + buckets.length + 1] as number) + 1;
    },
  };
}
