// `serve --workers 2` with the RELP listener, black box on real processes: `send syslog --relp` over several
// sessions spread over both workers, every message answered 200 stored once; counts and protocol refusals summed
// in the primary; SIGTERM ends every worker's sessions with serverclose; revoking the sensor closes its RELP
// sessions in every worker.
import { strict as assert } from 'node:assert';
import { type TestContext, test } from 'node:test';
import { runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { parseExposition } from '../helpers/prometheus.js';
import { connectRelp, type RelpTestClient } from '../helpers/relp-client.js';
import {
  addRelpSensor,
  LIBRELP_OFFERS as OFFERS,
  type RelpIdentity,
  sendRelpSamples,
} from '../helpers/relp-sensor.js';
import { readStoredSyslog } from '../helpers/stored-syslog.js';
import { syslogErrors } from '../helpers/syslog-errors.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { recordsByWorker } from './support.js';

/** `serve --workers 2` with RELP on 127.0.0.1 port 0: both workers on the one port node:cluster shares. */
async function serveTwo(t: TestContext, dataDir: string): Promise<{ serve: ServeProcess; relp: number }> {
  const serve = await spawnServe(dataDir, ['--workers', '2'], {
    env: { THREATCOL_SYSLOG_RELP_LISTEN: '127.0.0.1:0' },
  });
  t.after(() => serve.stop('SIGKILL'));
  const lines = serve.logs.filter((l) => l.msg === 'syslog listening');
  assert.deepEqual(lines.map((l) => l.worker).sort(), [1, 2], 'each worker listens for RELP');
  const ports = new Set(lines.map((l) => l.relpPort));
  assert.equal(ports.size, 1, 'the workers share the RELP port');
  return { serve, relp: [...ports][0] as number };
}

/** Opened RELP sessions, one after another (node:cluster hands connections to the workers in turn). */
async function openSessions(t: TestContext, port: number, identity: RelpIdentity, n: number) {
  const clients: RelpTestClient[] = [];
  for (let i = 0; i < n; i++) {
    const client = await connectRelp(port, identity);
    t.after(() => client.socket.destroy());
    client.send(1, 'open', OFFERS);
    assert.match(await client.answer(1), /^200 OK/);
    clients.push(client);
  }
  return clients;
}

async function refusedByReason(serve: ServeProcess, reason: string): Promise<number | undefined> {
  const families = parseExposition(await (await fetch(`${serve.adminUrl}/metrics`)).text());
  return families
    .get('threatcol_syslog_connections_refused_total')
    ?.samples.find((s) => s.labels.reason === reason)?.value;
}

test('two workers: send syslog --relp over 4 sessions, every message answered 200 is stored once, by the workers; counts summed; SIGTERM: serverclose to every session', async (t) => {
  const dataDir = makeTempDir(t);
  const relay = await addRelpSensor(dataDir, 'relay');
  const { serve, relp } = await serveTwo(t, dataDir);
  const sent = await sendRelpSamples(relp, relay, 400, 4);
  assert.equal(sent.code, 0, sent.stderr);
  const summary = JSON.parse(sent.stdout) as Record<string, unknown>;
  assert.deepEqual([summary.acknowledged, summary.refused, summary.connections], [400, 0, 4]);
  // Answered means stored: read at once, each of the 400 is there once, written by both workers.
  const records = await readStoredSyslog(dataDir);
  assert.equal(records.length, 400);
  assert.equal(new Set(records.map((r) => r.original)).size, 400);
  const writers = [...recordsByWorker(dataDir)]
    .filter(([, rs]) => rs.some((r) => r.endpoint === 'syslog'))
    .map(([w]) => w)
    .sort();
  // node:cluster hands a session to a worker that has taken its last one: on a loaded box one worker may get all
  // four, so the run says which wrote; the counts below are summed over whichever did.
  t.diagnostic(`sessions stored through workers ${writers.join(', ')}`);
  assert.ok(writers.length > 0 && writers.every((w) => w === 1 || w === 2), `writers ${writers}`);

  await until(
    async () => (await syslogErrors(serve, dataDir, 'relay')).counts[0]?.stored === 400,
    20_000,
    "both workers' counts in sensor show --syslog-errors",
    100,
  );
  const { counts } = await syslogErrors(serve, dataDir, 'relay');
  assert.deepEqual(counts, [
    {
      sensor: 'relay',
      format: 'cef',
      received: 400,
      stored: 400,
      other: 0,
      invalid: 0,
      truncated: 0,
      incomplete: 0,
    },
  ]);

  // SIGTERM to the primary: every worker tells its sessions serverclose (txnr 0) before the end.
  const open = await openSessions(t, relp, relay, 4);
  serve.child.kill('SIGTERM');
  await Promise.all(open.map((c) => c.closed));
  assert.deepEqual(await serve.exited, { code: 0, signal: null });
  for (const client of open) {
    assert.deepEqual(
      client.answers.slice(1).map((a) => [a.txnr, a.command, a.data.length]),
      [[0, 'serverclose', 0]],
    );
  }
});

test('two workers: sessions broken by their senders are counted as relp_protocol in the primary; revoke closes the RELP sessions of every worker', async (t) => {
  const dataDir = makeTempDir(t);
  const relay = await addRelpSensor(dataDir, 'relay');
  const { serve, relp } = await serveTwo(t, dataDir);

  const broken = await openSessions(t, relp, relay, 4);
  for (const client of broken) client.socket.write('2 syslog 5 toolong\n');
  await Promise.all(broken.map((c) => c.closed));
  const warned = () => serve.logs.filter((l) => String(l.msg).startsWith('RELP session closed'));
  await until(() => warned().length === 4, 10_000, 'four broken sessions logged');
  t.diagnostic(`broken sessions in workers ${[...new Set(warned().map((l) => l.worker))].sort().join(', ')}`);
  await until(
    async () => (await refusedByReason(serve, 'relp_protocol')) === 4,
    10_000,
    'four relp_protocol refusals in /metrics',
    100,
  );

  const open = await openSessions(t, relp, relay, 4);
  const revoked = await runCli(['sensor', 'revoke', 'relay', '--data-dir', dataDir]);
  assert.equal(revoked.code, 0, revoked.stderr);
  await Promise.all(open.map((c) => c.closed)); // the test's timeout bounds it
  // Each session closed once, by the worker that held it (both workers, unless one took all four).
  const closing = serve.logs.filter((l) => String(l.msg).startsWith('syslog sensor revoked'));
  t.diagnostic(`sessions closed by workers ${[...new Set(closing.map((l) => l.worker))].sort().join(', ')}`);
  assert.equal(closing.length, 4);
});
