// Reliability 1: kill -9 at random moments under 16 concurrent senders; every acknowledged record survives, once.
import { strict as assert } from 'node:assert';
import { appendFileSync } from 'node:fs';
import { test } from 'node:test';
import { listSegments, threatsDir } from '../../src/store/files/segments.js';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { soak } from './support.js';

const CLIENTS = 16;
const CYCLES = soak(10, 50);

test(`crash durability: ${CYCLES} kill -9 cycles under ${CLIENTS} concurrent clients lose no acknowledged record`, async (t) => {
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'crash');
  const acked = new Set<string>();
  let sent = 0;
  let tornCut = 0;

  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const serve = await spawnServe(dataDir); // rejects if a restart fails
    tornCut += serve.logs.filter((l) => String(l.msg).startsWith('cut off a torn last line')).length;
    // No torn line may survive a restart: every line of every segment parses (readStored throws otherwise).
    const before = readStored(dataDir);
    assert.ok(
      before.length >= acked.size,
      `cycle ${cycle}: ${before.length} stored < ${acked.size} acknowledged`,
    );
    const agent = trustingAgent(dataDir, { connections: CLIENTS });
    let firstAck: () => void = () => {};
    const acking = new Promise<void>((resolve) => {
      firstAck = resolve;
    });
    let killed = false;
    const client = async (c: number) => {
      for (let n = 0; !killed; n++) {
        const marker = `crash-${cycle}-${c}-${n}`;
        sent++;
        try {
          const reply = await post(serve.url, '/generic', genericRecord({ threat: marker }), {
            agent,
            sensor: 'crash',
            key,
          });
          if (reply.status === 200) {
            acked.add(marker);
            firstAck();
          } else if (!killed) {
            throw new Error(`cycle ${cycle}: unexpected ${reply.status} ${reply.text}`);
          }
        } catch (error) {
          if (!killed) throw error;
          return;
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
    await acking;
    // A random moment once traffic flows: between 50 and 600 ms after the first acknowledgement.
    await new Promise((r) => setTimeout(r, 50 + Math.random() * 550));
    killed = true;
    serve.child.kill('SIGKILL');
    const exit = await serve.exited;
    assert.equal(exit.signal, 'SIGKILL');
    await Promise.all(clients);
    await agent.destroy();
  }

  // kill -9 leaves whole write()s behind; a power loss can leave half a line. Simulate one on the newest
  // segment: the next start must cut it off, and the records before it stay.
  const newest = listSegments(threatsDir(dataDir)).at(-1);
  assert.ok(newest, 'a segment exists');
  appendFileSync(newest.path, '{"id":"torn-by-power-loss","threat":"half a li');
  // One last restart cuts the torn tail; then every acknowledged record is there once.
  const last = await spawnServe(dataDir);
  tornCut += last.logs.filter((l) => String(l.msg).startsWith('cut off a torn last line')).length;
  await last.stop();
  assert.ok(tornCut >= 1, 'the torn tail was cut at restart');
  const stored = readStored(dataDir);
  const counts = new Map<string, number>();
  for (const r of stored) counts.set(String(r.threat), (counts.get(String(r.threat)) ?? 0) + 1);
  const lost = [...acked].filter((m) => !counts.has(m));
  const duplicated = [...counts].filter(([, n]) => n > 1).map(([m]) => m);
  t.diagnostic(
    `cycles=${CYCLES} sent=${sent} acknowledged=${acked.size} stored=${stored.length} lost=${lost.length} duplicated=${duplicated.length} tornTailsCut=${tornCut}`,
  );
  assert.deepEqual(lost, [], 'acknowledged records lost');
  assert.deepEqual(duplicated, [], 'records stored twice');
  assert.ok(acked.size >= CYCLES, 'every cycle acknowledged records');
});
