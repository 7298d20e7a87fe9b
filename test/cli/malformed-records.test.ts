// Stored data that looks like a record but is not exactly one, through the real binary on both backends: a line
// cut to its head (id, received_at, sensor, endpoint, criticality) and lines holding a second object after a
// valid one, written into a segment file (files: someone with disk access) or published straight into the
// stream (NATS: someone with rights on its subjects). Then a genuine record is sent. Every reader skips the
// bad ones and counts them: a CEF syslog output (real rsyslogd) and a signed webhook output get the genuine
// record and nothing forged, the look-up and `threats search --threat` answer, the feed with a threat filter
// works, `threats tail` shows the genuine record alone.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { newRecordId } from '../../src/records/record-id.js';
import { recordSubject } from '../../src/store/nats/names.js';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { genericRecord, storedGenericRecord } from '../helpers/records.js';
import { startRsyslog } from '../helpers/rsyslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS } from '../helpers/until.js';

const SECRET = 'shape-secret-0123456789';

/** The bad lines: a head-only record, and a valid record with a forged one after it, joined three ways. */
function badLines(backend: 'files' | 'nats'): { lines: string[]; ids: string[] } {
  const now = new Date().toISOString();
  const headOnly = {
    id: newRecordId(),
    received_at: now,
    sensor: 'fw1',
    endpoint: 'generic',
    criticality: 3,
  };
  const lines = [JSON.stringify(headOnly)];
  const ids = [headOnly.id];
  // A newline inside one line exists only in a NATS message (a segment's newline ends the line).
  for (const glue of backend === 'nats' ? ['', ',', '\n'] : ['', ',']) {
    const carrier = storedGenericRecord({ sensor: 'fw1', threat: 'carrier of a forged record' });
    const forged = storedGenericRecord({ sensor: 'fw1', threat: 'forged record' });
    lines.push(`${JSON.stringify(carrier)}${glue}${JSON.stringify(forged)}`);
    ids.push(carrier.id as string, forged.id as string);
  }
  return { lines, ids };
}

/** A webhook receiver that keeps every body as text (a forged body need not parse) and checks its signature. */
async function startHook(t: TestContext) {
  const got = { bodies: [] as string[], badSignatures: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      got.bodies.push(body);
      const want = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
      if (req.headers['x-threatcol-signature'] !== want) got.badSignatures += 1;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

/** GET on the admin listener: status and body. */
function get(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    })
      .on('error', reject)
      .end();
  });
}

/** The dashboard feed's first events, up to `ready` or `failure` (a hang guard of 20 s). */
function feedStart(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        text += d;
        if (text.includes('event: ready') || text.includes('event: failure')) {
          resolve(text);
          req.destroy();
        }
      });
    });
    req.setTimeout(20_000, () => {
      resolve('no answer within 20 s');
      req.destroy();
    });
    req.on('error', reject);
    req.end();
  });
}

/** Polls until `check` holds or `ms` pass; whether it held (the caller asserts, so every outcome is reported). */
async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function scenario(t: TestContext, backend: 'files' | 'nats'): Promise<void> {
  const dataDir = makeTempDir(t);
  let env: Record<string, string> = {};
  let publish: ((line: string) => Promise<void>) | null = null;
  if (backend === 'nats') {
    const nats = await startNatsServer(t);
    env = { THREATCOL_STORE_BACKEND: 'nats', THREATCOL_NATS_SERVERS: nats.url };
    const nc = await connect({ servers: nats.url });
    t.after(() => nc.close());
    const js = jetstream(nc);
    publish = async (line) => {
      await js.publish(recordSubject('generic', 'fw1'), line);
    };
  }
  const rsyslogDir = join(dataDir, 'rsyslog');
  mkdirSync(rsyslogDir);
  const rsyslog = await startRsyslog(rsyslogDir, 'tcp');
  t.after(() => rsyslog.stop());
  const hook = await startHook(t);
  writeFileSync(join(dataDir, 'hook.secret'), `${SECRET}\n`);
  const config = join(dataDir, 'config.json');
  const common = { startAt: 'oldest', retryMaxMs: 2000, batch: { maxWaitMs: 100 } };
  writeFileSync(
    config,
    JSON.stringify({
      outputs: {
        cef: {
          type: 'syslog',
          host: '127.0.0.1',
          port: rsyslog.port,
          transport: 'tcp',
          format: 'cef',
          ...common,
        },
        hook: { type: 'webhook', url: hook.url, secretFile: join(dataDir, 'hook.secret'), ...common },
      },
    }),
  );
  const key = await addSensorCli(dataDir, 'fw1', [], env);
  const bad = badLines(backend);
  if (backend === 'files') {
    // Into a segment the collector reads, before it starts, as anyone able to write the data directory could.
    mkdirSync(join(dataDir, 'threats'), { recursive: true });
    const day = new Date().toISOString().slice(0, 10).replaceAll('-', '');
    writeFileSync(join(dataDir, 'threats', `${day}-000001.ndjson`), `${bad.lines.join('\n')}\n`);
  }
  const serve = await spawnServe(dataDir, ['--config', config], { env });
  t.after(() => serve.stop());
  for (const line of bad.lines) await publish?.(line);

  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const sent = await post(serve.url, '/generic', genericRecord({ threat: 'genuine after' }), {
    sensor: 'fw1',
    key,
    agent,
  });
  assert.equal(sent.status, 200, sent.text);
  const genuine = (sent.json as { ids: string[] }).ids[0] as string;

  const cefGotGenuine = await within(OUTPUTS_THREAD_MS, () =>
    rsyslog.lines().some((l) => l.includes(genuine)),
  );
  const hookGotGenuine = await within(OUTPUTS_THREAD_MS, () =>
    hook.got.bodies.some((b) => b.includes(genuine)),
  );
  const admin = serve.adminUrl as string;
  const search = await get(`${admin}/api/search?threat=genuine`);
  const cli = await runCli(['threats', 'search', '--threat', 'genuine', '--json', '--data-dir', dataDir], {
    env,
  });
  const feed = await feedStart(`${admin}/api/feed?threat=genuine`);
  const tail = await runCli(['threats', 'tail', '--no-follow', '--json', '--data-dir', dataDir], { env });
  const list = await runCli(
    [
      'outputs',
      'list',
      '--json',
      '--data-dir',
      dataDir,
      '--config',
      config,
      '--admin-listen',
      new URL(admin).host,
    ],
    { env },
  );
  const states =
    list.code === 0 ? (JSON.parse(list.stdout) as { outputs: { name: string; state: string }[] }) : null;
  const idsIn = (text: string) => [genuine, ...bad.ids].filter((id) => text.includes(id));
  const skippedLogged = serve.logs.some(
    (l) =>
      typeof l.msg === 'string' && l.msg.startsWith('stored data that is not a threatcol record was skipped'),
  );

  assert.deepEqual(
    {
      cefGotGenuine,
      cefIds: idsIn(rsyslog.lines().join('\n')),
      hookGotGenuine,
      hookIds: idsIn(hook.got.bodies.join('\n')),
      hookForged: hook.got.bodies.some((b) => b.includes('forged')),
      hookBadSignatures: hook.got.badSignatures,
      outputStates: states?.outputs.map((o) => [o.name, o.state]).sort() ?? list.stderr,
      skippedLogged,
      searchStatus: search.status,
      searchIds: idsIn(search.text),
      cliSearchExit: cli.code,
      cliSearchIds: idsIn(cli.stdout),
      feedReady: feed.includes('event: ready') && !feed.includes('event: failure'),
      feedGenuine: feed.includes('genuine after'),
      tailExit: tail.code,
      tailIds: idsIn(tail.stdout),
      tailSaysSkipped: /not a threatcol record was skipped/.test(tail.stderr),
    },
    {
      cefGotGenuine: true,
      cefIds: [genuine],
      hookGotGenuine: true,
      hookIds: [genuine],
      hookForged: false,
      hookBadSignatures: 0,
      outputStates: [
        ['cef', 'running'],
        ['hook', 'running'],
      ],
      skippedLogged: true,
      searchStatus: 200,
      searchIds: [genuine],
      cliSearchExit: 0,
      cliSearchIds: [genuine],
      feedReady: true,
      feedGenuine: true,
      tailExit: 0,
      tailIds: [genuine],
      tailSaysSkipped: true,
    },
  );
}

test('files: a head-only line and two objects in one line are skipped by every reader and output; the genuine record after them arrives', async (t) => {
  await scenario(t, 'files');
});

test('NATS: a head-only message and two objects in one message are skipped by every reader and output; the genuine record after them arrives', async (t) => {
  await scenario(t, 'nats');
});
