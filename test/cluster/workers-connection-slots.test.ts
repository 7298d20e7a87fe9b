// `serve --workers 2`, black box: the connection policy holds across workers. Silent sockets reconnecting on
// close fill the syslog TLS listener's slots in the primary's count; a pinned-certificate sensor still gets in,
// the oldest silent socket on whichever worker holds it making room.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect } from 'node:tls';
import { runCli, spawnServe } from '../helpers/cli.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import { floodSilentSockets } from '../helpers/silent-sockets.js';
import { readStoredSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const cef = (name: string) =>
  `<134>CEF:0|Sophos|XG|19.0|2|${name}|Medium|src=10.1.1.7 dst=198.51.100.4 dpt=80 proto=TCP cat=threat`;
const TRIES = 3;

test('two workers: silent sockets filling the TLS listener across workers; a pinned-certificate sensor is stored within 3 tries', async (t) => {
  const dataDir = makeTempDir(t);
  const certPath = join(dataDir, 'fw.pem');
  const keyPath = join(dataDir, 'fw.key');
  writeSelfSigned(certPath, keyPath, { cn: 'fw' });
  const added = await runCli([
    'sensor',
    'add',
    'fw',
    '--data-dir',
    dataDir,
    '--syslog',
    '--format',
    'cef',
    '--client-cert',
    certPath,
  ]);
  assert.equal(added.code, 0, added.stderr);
  // 512 in all and 64 per address for the daemon: each worker alone has room for the whole flood (576 sockets
  // from 9 addresses), so only the primary's count across workers is full.
  const serve = await spawnServe(dataDir, ['--workers', '2'], {
    env: {
      THREATCOL_SYSLOG_LISTEN: '127.0.0.1:0',
      THREATCOL_SERVER_MAX_CONNECTIONS: '512',
      THREATCOL_SERVER_MAX_CONNECTIONS_PER_ADDRESS: '64',
      THREATCOL_LOG_LEVEL: 'info',
    },
  });
  t.after(() => serve.stop('SIGKILL'));
  const port = serve.logs.find((l) => l.msg === 'syslog listening')?.tlsPort as number;
  assert.equal(typeof port, 'number');

  const flood = floodSilentSockets(
    t,
    port,
    Array.from({ length: 9 }, (_, i) => `127.0.0.${i + 2}`),
    64,
  );
  await until(() => flood.connects() >= 600, 30_000, 'the flood fills the listener');
  const cert = readFileSync(certPath, 'utf8');
  const key = readFileSync(keyPath, 'utf8');
  const results: boolean[] = [];
  for (let i = 1; i <= TRIES && !results.includes(true); i++) {
    const name = `Workers try ${i}`;
    await new Promise<void>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, cert, key, rejectUnauthorized: false }, () => {
        socket.end(`${Buffer.byteLength(cef(name))} ${cef(name)}`);
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve());
      socket.resume();
      setTimeout(() => socket.destroy(), 15_000).unref(); // hang guard
    });
    results.push(
      await until(
        async () => (await readStoredSyslog(dataDir)).some((r) => r.threat === name),
        3_000,
        name,
        200,
      ).then(
        () => true,
        () => false,
      ),
    );
  }
  const floodConnects = flood.connects();
  await flood.stop();
  t.diagnostic(`stored on try ${results.indexOf(true) + 1}; the flood opened ${floodConnects} connections`);
  assert.ok(results.includes(true), `stored on none of ${TRIES} tries`);
});
