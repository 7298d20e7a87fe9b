// `threatcol serve` with an `outputs` section, for the outputs' end-to-end tests: the real binary on loopback
// with a sensor, records posted over real TLS, and the outputs commands (`dead-letter --json`, `test`) run against it.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addSensorCli, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';

const PER_REQUEST = 500;

export interface DeadLetter {
  record: { id: string };
  answer: string;
}

export interface OutputServe {
  config: string;
  serve: ServeProcess;
  /** Posts generic records as sensor `fw`, at most 500 a request; ingest must take them (200). */
  post(records: Record<string, unknown>[]): Promise<void>;
  /** `threatcol outputs dead-letter NAME --json`. */
  deadLetters(name: string): Promise<DeadLetter[]>;
  /** `threatcol outputs test NAME` must succeed: the id of the sample the receiver took. */
  testOutput(name: string): Promise<string>;
}

export async function serveWithOutputs(
  t: { after(fn: () => unknown): void },
  dir: string,
  outputs: Record<string, Record<string, unknown>>,
  /** A wrapper command in front of node (strace: test/helpers/slow-renames.ts). */
  prefix?: string[],
): Promise<OutputServe> {
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ outputs }));
  const key = await addSensorCli(dir, 'fw');
  const serve = await spawnServe(dir, ['--config', config], prefix ? { prefix, timeoutMs: 60_000 } : {});
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  return {
    config,
    serve,
    async post(records) {
      for (let start = 0; start < records.length; start += PER_REQUEST) {
        const body = records.slice(start, start + PER_REQUEST);
        const reply = await post(serve.url, '/generic', body, { agent, sensor: 'fw', key });
        assert.equal(reply.status, 200, 'ingest never waits for an output');
      }
    },
    async deadLetters(name) {
      const listed = await runCli(['outputs', 'dead-letter', name, '--json', '--data-dir', dir]);
      assert.equal(listed.code, 0, listed.stderr);
      return JSON.parse(listed.stdout) as DeadLetter[];
    },
    async testOutput(name) {
      const sample = await runCli(['outputs', 'test', name, '--data-dir', dir, '--config', config]);
      assert.equal(sample.code, 0, sample.stderr);
      const id = /took the sample record (\S+)\./.exec(sample.stdout)?.[1];
      assert.ok(id, sample.stdout);
      return id;
    },
  };
}

/** An output as `threatcol outputs list --json` shows it (the fields the tests read). */
export interface ListedOutput {
  name: string;
  state: string;
  position: { lagRecords: number; skippedRecords: number };
}

/** `threatcol outputs list --json` against a running serve's admin listener: must succeed. */
export async function listedOutputs(
  dir: string,
  config: string,
  serve: ServeProcess,
): Promise<ListedOutput[]> {
  const admin = new URL(serve.adminUrl as string).host;
  const list = await runCli([
    'outputs',
    'list',
    '--json',
    '--data-dir',
    dir,
    '--config',
    config,
    '--admin-listen',
    admin,
  ]);
  assert.equal(list.code, 0, list.stderr);
  return JSON.parse(list.stdout).outputs as ListedOutput[];
}

/**
 * `threatcol serve` (loopback, port 0) with `outputs` as its configuration, which must refuse it: exit 78, a
 * configuration error. Its stderr, naming the output and the key.
 */
export async function serveRefusing(dir: string, outputs: Record<string, unknown>): Promise<string> {
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ outputs }));
  const args = ['serve', '--data-dir', dir, '--config', config, '--host', '127.0.0.1', '--port', '0'];
  const result = await runCli(args);
  assert.equal(result.code, 78, result.stderr);
  return result.stderr;
}
