// The outputs' "Done when" scenario, one harness for every receiver type (DESIGN 13): 10,000 records stored
// through the real binary while the receiver is down, the receiver back but slow and refusing some records,
// `serve` killed -9 twice while it forwards; then what the receiver saw and the dead-letter file are checked.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { listDeadLetterFiles } from '../../src/outputs/dead-letter-files.js';
import { addSensorCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { until, untilDrained } from '../helpers/until.js';

export const KILL_RECORDS = 10_000;
const PER_REQUEST = 1000;
/** A refused record every this many records stored (it is criticality 4, so every filter here takes it). */
const REFUSE_EVERY = 2500;
/** Where the two kills land: after this share of the matching records were taken or dead-lettered. */
const KILL_AT = [0.25, 0.6];

/** A receiver type under the scenario, as its test drives it. */
export interface ReceiverUnderTest {
  /** The output's own keys (type, where, credentials); the harness adds filter, batch, retries and startAt. */
  output: Record<string, unknown>;
  /** Records whose threat contains this are refused for good by the receiver; null: it cannot refuse (syslog). */
  refuseMarker: string | null;
  /** The output's filter.minCriticality (default 2). */
  minCriticality?: number;
  /** batch.maxRecords (default 200): the most records a kill may make the receiver take twice. */
  maxRecords?: number;
  setDown(down: boolean): void | Promise<void>;
  setSlow(slow: boolean): void | Promise<void>;
  /** How often the receiver took each record id; `matching` is the ids the filter takes, in store order. */
  taken(matching: readonly string[]): Map<string, number>;
  /** The ids the receiver refused for good, from its own answers. */
  refused(matching: readonly string[]): Set<string>;
  /** Records the receiver is sent again by design, not by a kill (HEC: the events before an invalid one). */
  resentByDesign?(): number;
  /**
   * Whether a kill may find every record already sent (syslog: no acknowledgement, and loopback socket buffers
   * take all 10,000 records at once, to be read by rsyslog after the kill): the kills are then reported, not
   * required to land mid-forwarding.
   */
  unacknowledged?: boolean;
}

export interface KillTwiceResult {
  dir: string;
  config: string;
  serve: ServeProcess;
  matching: string[];
  deadLetters: string[];
  duplicates: number;
  summary: string;
}

/**
 * The record ids in an output's dead letters, in file order (repeats kept): the parts it was rotated into
 * (`NAME.dead-letter.SEQ-PID.ndjson`), oldest first, then the live file. Only complete lines: serve may be writing
 * the last one as it is read (a line is complete once its newline is there).
 */
export function deadLetterIds(dir: string, name: string): string[] {
  const ids: string[] = [];
  for (const file of listDeadLetterFiles(dir, name)) {
    let text: string;
    try {
      text = readFileSync(file.path, 'utf8');
    } catch {
      continue; // rotated or claimed between the listing and the read: the next poll sees it under its new name
    }
    for (const line of text.slice(0, text.lastIndexOf('\n') + 1).split('\n')) {
      if (line !== '') ids.push((JSON.parse(line) as { record: { id: string } }).record.id);
    }
  }
  return ids;
}

export async function runKillTwice(
  t: { after(fn: () => unknown): void; diagnostic(message: string): void },
  dir: string,
  name: string,
  receiver: ReceiverUnderTest,
): Promise<KillTwiceResult> {
  const maxRecords = receiver.maxRecords ?? 200;
  const minCriticality = receiver.minCriticality ?? 2;
  const config = join(dir, 'config.json');
  const output = {
    ...receiver.output,
    filter: { minCriticality },
    batch: { maxRecords, maxWaitMs: 100 },
    retryMaxMs: 1000,
    startAt: 'oldest',
  };
  writeFileSync(config, JSON.stringify({ outputs: { [name]: output } }));
  await receiver.setDown(true);
  const key = await addSensorCli(dir, 'fw');
  let serve = await spawnServe(dir, ['--config', config]);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dir);
  t.after(() => agent.close());

  const marker = receiver.refuseMarker ?? 'refused';
  for (let start = 0; start < KILL_RECORDS; start += PER_REQUEST) {
    const body = Array.from({ length: PER_REQUEST }, (_, j) => {
      const i = start + j;
      const refuse = i % REFUSE_EVERY === 1234;
      return genericRecord({ threat: refuse ? `${marker} ${i}` : `t${i}`, criticality: refuse ? 4 : i % 5 });
    });
    const reply = await post(serve.url, '/generic', body, { agent, sensor: 'fw', key });
    assert.equal(reply.status, 200, 'ingest never waits for an output that is down');
  }
  const stored = readStored(dir);
  assert.equal(stored.length, KILL_RECORDS);
  const matching = stored
    .filter((r) => (r.criticality as number) >= minCriticality)
    .map((r) => r.id as string);
  const matchingSet = new Set(matching);
  const done = () => {
    const dead = new Set(deadLetterIds(dir, name));
    const taken = receiver.taken(matching);
    return matching.filter((id) => taken.has(id) || dead.has(id)).length;
  };

  await until(
    () => serve.logs.some((l) => l.msg === 'output delivery failed; retrying'),
    30_000,
    'the output retries while the receiver is down',
  );
  assert.equal(receiver.taken(matching).size, 0, 'a receiver that is down takes nothing');
  await receiver.setDown(false);
  await receiver.setSlow(true);
  for (const share of KILL_AT) {
    // Paced by the machine (forwarding runs at a low priority): a guard against a stall, not a time to beat.
    await untilDrained(() => share * matching.length - done(), 60_000, `${share * 100}% forwarded`);
    // Checked before the kill: a syslog receiver goes on reading what was already in its socket after it.
    const doneAtKill = done();
    serve.child.kill('SIGKILL');
    await serve.exited;
    if (receiver.unacknowledged) t.diagnostic(`kill at ${doneAtKill} of ${matching.length} taken`);
    else assert.ok(doneAtKill < matching.length, 'the kill landed while the output was forwarding');
    serve = await spawnServe(dir, ['--config', config]);
  }
  await receiver.setSlow(false);
  await untilDrained(() => matching.length - done(), 60_000, 'every matching record taken or dead-lettered');

  const taken = receiver.taken(matching);
  const refused = receiver.refused(matching);
  const deadLetters = deadLetterIds(dir, name);
  const dead = new Set(deadLetters);
  for (const id of taken.keys())
    assert.ok(matchingSet.has(id), `${id}: only records the filter takes are sent`);
  for (const id of matching) assert.ok(taken.has(id) || dead.has(id), `record ${id} was skipped`);
  assert.equal(dead.size, deadLetters.length, 'no record is dead-lettered twice');
  assert.deepEqual(
    [...deadLetters].sort(),
    [...refused].sort(),
    'the dead letters are exactly the records the receiver refused',
  );
  for (const id of refused) assert.ok(!taken.has(id), `${id}: a refused record was not also taken`);
  if (receiver.refuseMarker !== null) assert.ok(refused.size > 0, 'the receiver refused some records');
  const duplicates = [...taken.values()].reduce((sum, n) => sum + n - 1, 0);
  const byDesign = receiver.resentByDesign?.() ?? 0;
  const summary =
    `matching ${matching.length}, taken ${taken.size}, dead letters ${deadLetters.length}, ` +
    `taken twice ${duplicates} (bound ${KILL_AT.length} kills x ${maxRecords} + ${byDesign} re-sent by design)`;
  assert.ok(
    duplicates <= KILL_AT.length * maxRecords + byDesign,
    `at most the batch in flight at each kill is taken again: ${summary}`,
  );
  return { dir, config, serve, matching, deadLetters, duplicates, summary };
}
