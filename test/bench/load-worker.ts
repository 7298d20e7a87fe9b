// The load generator process, started once on the load core: reads one JSON job per stdin line
// ({"kind": "autocannon" | "reconnect", ...}) and answers one LoadResult JSON line per job. The bodies are
// made here, a new one per request (test/bench/payloads.ts), from the job's payload.
import { createInterface } from 'node:readline';
import { type AutocannonOptions, runAutocannon } from './load-autocannon.js';
import { type ReconnectOptions, runReconnect } from './load-reconnect.js';
import { type Payload, payloadRecords } from './payloads.js';

interface Job {
  kind: 'autocannon' | 'reconnect';
  options: Record<string, unknown>;
  payload: Payload;
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue;
  const job = JSON.parse(line) as Job;
  try {
    const result =
      job.kind === 'autocannon'
        ? await runAutocannon(
            job.options as unknown as AutocannonOptions,
            job.payload,
            payloadRecords(job.payload),
          )
        : await runReconnect({ ...(job.options as unknown as ReconnectOptions), payload: job.payload });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ error: String((error as Error).stack ?? error) })}\n`);
  }
}
