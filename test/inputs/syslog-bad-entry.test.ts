// A registry entry whose syslog identity is malformed (a number for its networks, no networks, a string of
// fingerprints, a CA that is a number or not PEM, a name that is a number, a format that is none of the four...), files and NATS: the running
// collector skips and reports it, keeps serving the other sensors over HTTPS and syslog, also when a client
// certificate of that entry's CA connects, and starts again with the entry still there.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect } from 'node:tls';
import { Kvm } from '@nats-io/kv';
import { connect as connectNats } from '@nats-io/transport-node';
import { encodeToken } from '../../src/store/nats/names.js';
import { addSensorCli, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { makeTestCa } from '../helpers/test-ca.js';
import { until } from '../helpers/until.js';

const CEF = (n: number) =>
  `<134>1 2026-11-26T12:00:00Z ngfw - - - - CEF:0|Check Point|VPN-1|R81|${n}|Attack ${n}|8|src=10.0.0.${n} dst=192.0.2.1 dpt=443 proto=TCP`;

/** The malformed syslog identities, each under its own sensor name (a valid sensor otherwise). */
function badShapes(caPem: string): [string, (syslog: Record<string, unknown>) => unknown][] {
  return [
    ['from-number', (s) => ({ ...s, from: 5 })],
    ['from-missing', ({ from: _, ...s }) => s],
    ['from-null', (s) => ({ ...s, from: null })],
    ['from-numbers', (s) => ({ ...s, from: [5] })],
    ['pins-string', (s) => ({ ...s, client_cert_sha256: 'abc' })],
    ['ca-number', (s) => ({ ...s, client_ca: 1, client_cn: 'fw-ca' })],
    ['cn-number', (s) => ({ ...s, from: [], client_ca: caPem, client_cn: 5 })],
    ['syslog-string', () => 'tls'],
    ['syslog-null', () => null],
    ['ca-not-pem', (s) => ({ ...s, client_ca: 'not a certificate', client_cn: 'fw-ca' })],
    ['from-not-cidr', (s) => ({ ...s, from: ['127.0.0.1/33'] })],
    ['format-number', (s) => ({ ...s, format: 5 })],
    ['format-unknown', (s) => ({ ...s, format: 'PANOS' })],
    ['format-inherited', (s) => ({ ...s, format: 'constructor' })],
  ];
}

/** One plain-TCP syslog connection sending `messages` octet-counted; resolves once closed. */
function sendTcp(port: number, messages: string[]): Promise<void> {
  return new Promise<void>((resolve) => {
    const socket = connectTcp({ host: '127.0.0.1', port }, () =>
      socket.end(messages.map((m) => `${Buffer.byteLength(m)} ${m}`).join('')),
    );
    socket.on('error', () => {});
    socket.on('close', () => resolve());
    socket.resume();
  });
}

/** A TLS connection from 127.0.0.2 presenting `client`; resolves once the collector closed it (no sensor). */
function tlsClosed(port: number, client: { certPath: string; keyPath: string }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const guard = setTimeout(() => {
      socket.destroy();
      reject(new Error('the collector kept a connection of no sensor open'));
    }, 20_000);
    const socket = connect(
      {
        socket: connectTcp({ host: '127.0.0.1', port, localAddress: '127.0.0.2' }),
        rejectUnauthorized: false,
        cert: readFileSync(client.certPath),
        key: readFileSync(client.keyPath),
      },
      () => socket.write(`${Buffer.byteLength(CEF(99))} ${CEF(99)}`),
    );
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(guard);
      resolve();
    });
    socket.resume();
  });
}

/** Waits until the store (either backend) holds `count` syslog records, read back by `threats tail`. */
async function storedSyslog(dataDir: string, env: Record<string, string>, count: number): Promise<void> {
  const args = ['threats', 'tail', '--data-dir', dataDir, '--no-follow', '--json', '--endpoint', 'syslog'];
  await until(
    async () => (await runCli(args, { env })).stdout.split('\n').filter(Boolean).length >= count,
    20_000,
    `${count} syslog records stored`,
    100,
  );
}

async function accepted(serve: ServeProcess, dataDir: string, key: string): Promise<void> {
  const agent = trustingAgent(dataDir);
  const reply = await post(serve.url, '/generic', genericRecord(), { agent, sensor: 'good', key });
  assert.equal(reply.status, 200, `good is not accepted: ${serve.stderr()}`);
}

const alive = (serve: ServeProcess) =>
  assert.equal(serve.child.exitCode, null, `the collector stopped: ${serve.stderr().slice(-2000)}`);

async function survives(
  t: { after(fn: () => unknown): void },
  dataDir: string,
  env: Record<string, string>,
  putBad: (name: string, value: unknown) => Promise<void>,
): Promise<void> {
  const ca = makeTestCa(dataDir, 'branch-ca');
  const client = ca.issue('fw-client', 'fw-ca');
  const key = await addSensorCli(
    dataDir,
    'good',
    ['--syslog', '--format', 'cef', '--from', '127.0.0.1/32'],
    env,
  );
  const good = JSON.parse(
    (await runCli(['sensor', 'show', 'good', '--json', '--data-dir', dataDir], { env })).stdout,
  ) as Record<string, unknown>;
  const serveEnv = {
    ...env,
    THREATCOL_SYSLOG_LISTEN: '127.0.0.1:0',
    THREATCOL_SYSLOG_TCP_LISTEN: '127.0.0.1:0',
  };
  let serve = await spawnServe(dataDir, [], { env: serveEnv });
  t.after(() => serve.stop());
  const ports = () =>
    serve.logs.find((l) => l.msg === 'syslog listening') as { tlsPort: number; tcpPort: number };
  await until(() => ports() !== undefined, 20_000, 'syslog listening');

  const at = good.created_at as string;
  const base = {
    description: '',
    timezone: null,
    status: 'active',
    created_at: at,
    revoked_at: null,
    keys: [{ hash: `sha256:${'0'.repeat(64)}`, created_at: at, expires_at: null }],
  };
  const shapes = badShapes(readFileSync(ca.certPath, 'utf8'));
  for (const [i, [name, shape]] of shapes.entries()) {
    await putBad(name, { ...base, name, syslog: shape(good.syslog as Record<string, unknown>) });
    // Seen by the running collector: it says so at warn, naming every bad entry so far.
    await until(
      () => {
        alive(serve);
        const warns = serve.logs.filter((l) => String(l.msg).includes('not valid and skipped'));
        return (warns.at(-1)?.rejected as unknown[] | undefined)?.length === i + 1;
      },
      20_000,
      `${name} reported`,
    );
    alive(serve);
  }
  // A certificate of the CA only a bad entry names is nobody's: refused, the collector runs on.
  await tlsClosed(ports().tlsPort, client);
  await sendTcp(ports().tcpPort, [CEF(1)]);
  await storedSyslog(dataDir, env, 1);
  await accepted(serve, dataDir, key);
  alive(serve);
  const warn = serve.logs.filter((l) => String(l.msg).includes('not valid and skipped')).at(-1);
  assert.equal(warn?.level, 40);
  const reasons = new Map(
    (warn?.rejected as { entry: string; reason: string }[]).map((r) => [r.entry, r.reason]),
  );
  assert.match(reasons.get('from-number') ?? '', /^syslog\.from /);
  assert.match(reasons.get('pins-string') ?? '', /^syslog\.client_cert_sha256 /);
  assert.match(reasons.get('ca-not-pem') ?? '', /^syslog\.client_ca /);
  assert.match(reasons.get('cn-number') ?? '', /^syslog\.client_cn /);
  assert.match(reasons.get('syslog-string') ?? '', /^syslog is not/);
  assert.match(reasons.get('format-unknown') ?? '', /^syslog\.format is not one of panos, cef/);
  assert.match(reasons.get('format-inherited') ?? '', /^syslog\.format /);

  // Restarted with the bad entries there, it serves at once.
  await serve.stop();
  serve = await spawnServe(dataDir, [], { env: serveEnv });
  await until(() => ports() !== undefined, 20_000, 'syslog listening');
  await accepted(serve, dataDir, key);
  await sendTcp(ports().tcpPort, [CEF(2)]);
  await storedSyslog(dataDir, env, 2);
  alive(serve);

  const list = await runCli(['sensor', 'list', '--data-dir', dataDir], { env });
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /good/);
  assert.match(list.stderr, new RegExp(`${shapes.length} sensor registry entries are not valid and skipped`));
  const check = await runCli(['check', '--json', '--data-dir', dataDir, '--no-daemon'], { env });
  const registry = (
    JSON.parse(check.stdout) as { checks: { name: string; status: string; message: string }[] }
  ).checks.find((c) => c.name === 'registry');
  assert.equal(registry?.status, 'warn', check.stdout);
  assert.match(registry?.message ?? '', /from-number \(syslog\.from /);
}

test('files: sensors.json entries with a malformed syslog identity are skipped and reported; the collector serves the others', async (t) => {
  const dataDir = makeTempDir(t);
  await survives(t, dataDir, {}, async (_name, value) => {
    const path = join(dataDir, 'sensors.json');
    const data = JSON.parse(readFileSync(path, 'utf8')) as { sensors: unknown[] };
    data.sensors.push(value);
    writeFileSync(path, JSON.stringify(data));
  });
});

test('NATS: registry values with a malformed syslog identity are skipped and reported; the collector serves the others', async (t) => {
  const nats = await startNatsServer(t);
  const dataDir = makeTempDir(t);
  const env = { THREATCOL_STORE_BACKEND: 'nats', THREATCOL_NATS_SERVERS: nats.url };
  const nc = await connectNats({ servers: nats.url });
  t.after(() => nc.close());
  await survives(t, dataDir, env, async (name, value) => {
    const kv = await new Kvm(nc).open('threatcol_sensors');
    await kv.put(encodeToken(name), JSON.stringify(value));
  });
});
