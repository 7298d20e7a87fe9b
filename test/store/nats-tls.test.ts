// NATS credentials never cross the network in clear (F2): a fake server on loopback that offers no TLS gets no
// CONNECT from a client told `tls://` or `nats.tls.required`; a real nats-server with TLS serves the CLI over
// it with a CA file; and the default (required with credentials beyond loopback) as a pure rule.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/load-config.js';
import { natsTlsRequired, serverHost } from '../../src/store/nats/nats-tls.js';
import { runCli } from '../helpers/cli.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const INFO =
  'INFO {"server_id":"x","version":"2.10.0","proto":1,"max_payload":1048576,"tls_required":false}\r\n';

/** A loopback server that greets like NATS and records every byte a client sends. */
async function fakeNats(t: {
  after(fn: () => unknown): void;
}): Promise<{ port: number; received: () => string }> {
  let received = '';
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (d) => (received += d.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    socket.write(INFO);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as { port: number }).port, received: () => received };
}

const PASSWORD = 's3cret-pass';

test('NATS TLS: with tls:// or nats.tls.required, a server offering no TLS never gets the credentials', async (t) => {
  const dataDir = makeTempDir(t);
  const cases: { name: string; env: Record<string, string>; clear: boolean }[] = [
    { name: 'tls:// URL', env: { THREATCOL_NATS_SERVERS: 'tls://127.0.0.1:PORT' }, clear: false },
    {
      name: 'tls:// URL with the credentials in it',
      env: { THREATCOL_NATS_SERVERS: `tls://collector:${PASSWORD}@127.0.0.1:PORT` },
      clear: false,
    },
    {
      name: 'nats.tls.required true',
      env: { THREATCOL_NATS_SERVERS: 'nats://127.0.0.1:PORT', THREATCOL_NATS_TLS_REQUIRED: 'true' },
      clear: false,
    },
    {
      name: 'tls:// URL beats nats.tls.required false',
      env: { THREATCOL_NATS_SERVERS: 'tls://127.0.0.1:PORT', THREATCOL_NATS_TLS_REQUIRED: 'false' },
      clear: false,
    },
    // The control: loopback, nothing asked, so the client goes on in clear (and this test can see a CONNECT).
    {
      name: 'loopback, nothing required',
      env: { THREATCOL_NATS_SERVERS: 'nats://127.0.0.1:PORT' },
      clear: true,
    },
  ];
  for (const c of cases) {
    const fake = await fakeNats(t);
    const env: Record<string, string> = {
      THREATCOL_STORE_BACKEND: 'nats',
      THREATCOL_NATS_USER: 'collector',
      THREATCOL_NATS_PASSWORD: PASSWORD,
      THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '1500',
    };
    for (const [k, v] of Object.entries(c.env)) env[k] = v.replace('PORT', String(fake.port));
    const r = await runCli(['sensor', 'list', '--data-dir', dataDir], { env });
    assert.notEqual(r.code, 0, `${c.name}: ${r.stdout}`);
    if (c.clear) {
      assert.match(fake.received(), new RegExp(`CONNECT .*"pass":"${PASSWORD}"`), c.name);
    } else {
      assert.ok(!fake.received().includes('CONNECT'), `${c.name}: ${fake.received()}`);
      assert.ok(!fake.received().includes(PASSWORD), c.name);
      assert.match(
        r.stderr,
        /server does not support 'tls', and TLS is required .*no credential was sent/,
        c.name,
      );
      assert.ok(!r.stderr.includes(PASSWORD), c.name);
    }
  }
});

test('NATS TLS: a real nats-server with TLS and a password serves the CLI through tls:// and a CA file', async (t) => {
  const dir = makeTempDir(t);
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-subj',
    '/CN=test CA',
    '-days',
    '1',
  );
  openssl('req', ...ec, '-keyout', file('srv.key'), '-out', file('srv.csr'), '-subj', '/CN=localhost');
  writeFileSync(file('ext'), 'subjectAltName=DNS:localhost\n');
  openssl(
    'x509',
    '-req',
    '-in',
    file('srv.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('srv.pem'),
    '-days',
    '1',
    '-extfile',
    file('ext'),
  );
  const nats = await startNatsServer(t, [
    '--tls',
    '--tlscert',
    file('srv.pem'),
    '--tlskey',
    file('srv.key'),
    '--user',
    'collector',
    '--pass',
    PASSWORD,
  ]);
  const dataDir = makeTempDir(t);
  const base = {
    THREATCOL_STORE_BACKEND: 'nats',
    THREATCOL_NATS_USER: 'collector',
    THREATCOL_NATS_PASSWORD: PASSWORD,
    THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '3000',
  };
  const env = {
    ...base,
    THREATCOL_NATS_SERVERS: `tls://127.0.0.1:${nats.port}`,
    THREATCOL_NATS_TLS_CA: file('ca.pem'),
  };
  const add = await runCli(['sensor', 'add', 'fw-tls', '--data-dir', dataDir, '--json'], { env });
  assert.equal(add.code, 0, add.stderr);
  const list = await runCli(['sensor', 'list', '--json', '--data-dir', dataDir], { env });
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(
    (JSON.parse(list.stdout) as { name: string }[]).map((s) => s.name),
    ['fw-tls'],
  );
  // Required TLS with the system CAs: this test CA is not one of them, so the certificate is refused.
  const untrusted = await runCli(['sensor', 'list', '--data-dir', dataDir], {
    env: { ...base, THREATCOL_NATS_SERVERS: `tls://localhost:${nats.port}` },
  });
  assert.notEqual(untrusted.code, 0);
  assert.match(untrusted.stderr, /certificate/i);
});

test('NATS TLS: required by default when credentials are set and a server is not loopback; explicit overrides', () => {
  const required = (overrides: Record<string, unknown>) =>
    natsTlsRequired(
      loadConfig({ env: {}, defaultConfigPath: '/nonexistent/threatcol.json', overrides }).config.nats,
    );
  const remote = { 'nats.servers': ['nats://10.0.0.11:4222', 'nats://127.0.0.1:4222'] };
  const local = { 'nats.servers': ['nats://127.0.0.1:4222', 'nats://[::1]:4222', 'localhost:4222'] };
  assert.equal(required(remote), false, 'no credentials: nothing to protect');
  assert.equal(required({ ...remote, 'nats.user': 'u', 'nats.password': 'p' }), true);
  assert.equal(required({ ...remote, 'nats.token': 't' }), true);
  assert.equal(required({ ...remote, 'nats.credentialsFile': '/etc/threatcol/nats.creds' }), true);
  assert.equal(required({ 'nats.servers': ['nats://u:p@nats.example:4222'] }), true);
  assert.equal(required({ ...local, 'nats.user': 'u', 'nats.password': 'p' }), false);
  assert.equal(required({ ...remote, 'nats.user': 'u', 'nats.tls.required': false }), false);
  assert.equal(required({ ...local, 'nats.tls.required': true }), true);
  assert.equal(required({ ...local, 'nats.tls.ca': '/etc/ssl/nats-ca.pem' }), true);
  assert.equal(required({ 'nats.servers': ['TLS://127.0.0.1:4222'], 'nats.tls.required': false }), true);
  assert.deepEqual(
    ['nats://u:p@Host.Example:4222', 'tls://[::1]:4222', 'h:1', 'nats://10.1.2.3'].map(serverHost),
    ['host.example', '::1', 'h', '10.1.2.3'],
  );
});
