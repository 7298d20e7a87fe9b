// A `syslog` output end to end through the real binary (DESIGN 13): `serve` forwards over TLS to a real rsyslogd;
// rsyslog stopped while records are posted, then started again: the cursor holds, every record arrives once.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { genericRecord, readStored } from '../helpers/records.js';
import { startRsyslog } from '../helpers/rsyslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, until, untilDrained } from '../helpers/until.js';
import { serveWithOutputs } from './output-serve.js';

/** The record ids rsyslog wrote, in order: its lines are `threat [threatcol@32473 id="…" …] BODY`. */
const idsIn = (lines: string[]) =>
  lines.map((line) => {
    const match = /^threat \[threatcol@32473 id="([^"]+)"/.exec(line);
    assert.ok(match, `unexpected line: ${line}`);
    return match[1] as string;
  });

test('syslog over TLS to rsyslog: every record once with its id, across an rsyslog stop and start', async (t) => {
  const dir = makeTempDir(t);
  const rsyslogDir = join(dir, 'rsyslog');
  mkdirSync(rsyslogDir);
  const rsyslog = await startRsyslog(rsyslogDir, 'tls');
  t.after(() => rsyslog.stop());
  const caPath = join(dir, 'rsyslog-ca.pem');
  writeFileSync(caPath, rsyslog.ca as string);
  const { serve, post, testOutput } = await serveWithOutputs(t, dir, {
    siem: {
      type: 'syslog',
      host: '127.0.0.1',
      port: rsyslog.port,
      ca: caPath,
      format: 'json',
      batch: { maxRecords: 200, maxWaitMs: 100 },
      retryMaxMs: 1000,
      startAt: 'oldest',
    },
  });
  let posted = 0;
  const postRecords = (count: number) =>
    post(
      Array.from({ length: count }, () => genericRecord({ threat: `t${posted}`, criticality: posted++ % 5 })),
    );

  await postRecords(1000);
  await untilDrained(
    () => 1000 - rsyslog.lines().length,
    OUTPUTS_THREAD_MS,
    'rsyslog wrote the first records',
  );
  await rsyslog.stop();
  await postRecords(1500);
  await until(
    () => serve.logs.some((l) => l.msg === 'output delivery failed; retrying'),
    30_000,
    'the output noticed rsyslog is gone',
  );
  await rsyslog.start();
  await postRecords(1000);

  const stored = readStored(dir).map((r) => r.id as string);
  assert.equal(stored.length, 3500);
  await untilDrained(
    () => stored.length - rsyslog.lines().length,
    OUTPUTS_THREAD_MS,
    'rsyslog wrote every record',
  );
  const received = idsIn(rsyslog.lines());
  assert.deepEqual(received, stored, 'every record once, in store order: none skipped, none twice');

  // `outputs test` sends one marked sample through the same receiver and reports its answer.
  const sampleId = await testOutput('siem');
  await until(() => idsIn(rsyslog.lines()).includes(sampleId), 30_000, 'the sample arrived');
  assert.match(rsyslog.lines().at(-1) ?? '', /threatcol outputs test \(not a threat\)/);
});
