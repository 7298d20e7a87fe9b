// What the silent-sensor tests share: a webhook output for alerts, the sensors as `sensor list --json` shows
// them, the collector's own records a receiver got, and /metrics.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { runCli, type ServeProcess } from '../helpers/cli.js';
import { until } from '../helpers/until.js';
import type { TestReceiver } from '../outputs/webhook-receiver.js';

/** The hang guard of each wait: an interval of 3 s plus a look every 2 s, many times over for a loaded box. */
export const WAIT_MS = 60_000;

export interface ListedSensor {
  name: string;
  state: string;
  status: string;
  expect_every: string | null;
  silent_since: string | null;
}

export async function listed(dir: string, extra: string[] = []): Promise<Map<string, ListedSensor>> {
  const r = await runCli(['sensor', 'list', '--data-dir', dir, '--json', ...extra]);
  assert.equal(r.code, 0, r.stderr);
  return new Map((JSON.parse(r.stdout) as ListedSensor[]).map((s) => [s.name, s]));
}

/** The collector's own records the webhook received, in order: `silent fw`, `back fw`. */
export function events(receiver: TestReceiver): string[] {
  return receiver.bodies.flatMap(({ body }) =>
    ((JSON.parse(body) as { records?: Record<string, unknown>[] }).records ?? [])
      .filter((r) => r.endpoint === 'collector')
      .map((r) => `${String(r.threat).replace('sensor ', '')} ${String(r.sensor)}`),
  );
}

export function webhookConfig(
  dir: string,
  receiver: TestReceiver,
  extra: Record<string, unknown> = {},
): string {
  const path = join(dir, 'config.json');
  writeFileSync(
    path,
    JSON.stringify({
      outputs: {
        alerts: {
          type: 'webhook',
          url: receiver.url,
          filter: { minCriticality: 3 },
          batch: { maxWaitMs: 50 },
        },
      },
      ...extra,
    }),
  );
  return path;
}

export async function metrics(serve: ServeProcess): Promise<string> {
  const r = await request(`${serve.adminUrl}/metrics`);
  return r.body.text();
}

/** Waits until the webhook holds `n` of the collector's records, then two looks more (none should come). */
export async function exactly(receiver: TestReceiver, n: number, what: string): Promise<string[]> {
  await until(() => events(receiver).length >= n, WAIT_MS, what);
  const at = Date.now();
  await until(() => Date.now() - at > 4500, WAIT_MS, 'two more looks', 250);
  return [...events(receiver)].sort();
}
