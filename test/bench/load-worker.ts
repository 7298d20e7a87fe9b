// The load generator process, started once on the load core: reads one JSON job per stdin line
// ({"kind": "autocannon" | "reconnect", ...}) and answers one LoadResult JSON line per job.
import { createInterface } from 'node:readline';
import { runAutocannon } from './load-autocannon.js';
import { type ReconnectOptions, runReconnect } from './load-reconnect.js';

interface Job {
  kind: 'autocannon' | 'reconnect';
  options: Record<string, unknown>;
  recordsPerRequest?: number;
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue;
  const job = JSON.parse(line) as Job;
  try {
    const result =
      job.kind === 'autocannon'
        ? await runAutocannon(job.options, job.recordsPerRequest ?? 1)
        : await runReconnect(job.options as unknown as ReconnectOptions);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ error: String((error as Error).stack ?? error) })}\n`);
  }
}
