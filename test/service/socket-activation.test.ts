// Socket activation: `serve` accepts on a listening socket passed as fd 3 with LISTEN_FDS/LISTEN_PID, as
// systemd passes it, and ignores variables meant for another process.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { test } from 'node:test';
import { inheritedListener } from '../../src/cli/serve.js';
import { endChild, guard } from '../helpers/children.js';
import { addSensorCli, BIN, cleanEnv, serveArgs } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('LISTEN_FDS is only honoured with the LISTEN_PID of this process (sd_listen_fds semantics)', () => {
  assert.equal(inheritedListener({ LISTEN_FDS: '1', LISTEN_PID: '4242' }, 4242), 3);
  assert.equal(inheritedListener({ LISTEN_FDS: '2', LISTEN_PID: '4242' }, 4242), 3);
  assert.equal(inheritedListener({ LISTEN_FDS: '1', LISTEN_PID: '4243' }, 4242), undefined);
  assert.equal(inheritedListener({ LISTEN_FDS: '1' }, 4242), undefined);
  assert.equal(inheritedListener({ LISTEN_FDS: '0', LISTEN_PID: '4242' }, 4242), undefined);
  assert.equal(inheritedListener({ LISTEN_FDS: 'x', LISTEN_PID: '4242' }, 4242), undefined);
  assert.equal(inheritedListener({}, 4242), undefined);
});

test('serve accepts HTTPS on the listening socket it inherits as fd 3 (ignoring server.port) and reloads on SIGHUP', async (t) => {
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'fw1');

  // The test plays systemd: it binds the socket, then hands it over and stops listening on it itself.
  const listener: Server = createServer();
  listener.listen({ host: '127.0.0.1', port: 0 });
  await once(listener, 'listening');
  const { port } = listener.address() as { port: number };
  const fd = (listener as unknown as { _handle: { fd: number } })._handle.fd;
  assert.ok(fd > 2);

  // `exec` keeps the shell's pid, so LISTEN_PID=$$ is the pid of the node process, as systemd sets it.
  const child = guard(
    spawn(
      '/bin/sh',
      [
        '-c',
        'LISTEN_PID=$$ exec "$0" "$@"',
        process.execPath,
        BIN,
        // --host/--port must be ignored: with them, serve would listen on another (random loopback) port.
        ...serveArgs(dataDir),
      ],
      { env: cleanEnv({ LISTEN_FDS: '1' }), stdio: ['ignore', 'pipe', 'pipe', fd] },
    ),
  );
  listener.close();
  const exited = once(child, 'exit');
  t.after(() => endChild(child, { signal: 'SIGTERM' }));
  let out = '';
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  const listening = new Promise<Record<string, unknown>>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      for (const line of out.split('\n')) {
        if (line.includes('"threatcol is listening"')) resolve(JSON.parse(line) as Record<string, unknown>);
      }
    });
    void exited.then(([code]) => reject(new Error(`serve exited (${code}): ${err}${out}`)));
  });
  const ready = await listening;
  assert.equal(ready.port, port);
  assert.match(out, /using the listening socket passed by systemd/);

  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const reply = await post(`https://127.0.0.1:${port}`, '/generic', genericRecord(), {
    agent,
    sensor: 'fw1',
    key,
  });
  assert.equal(reply.status, 200, reply.text);
  assert.equal(readStored(dataDir).length, 1);

  // `systemctl reload` (ExecReload=... threatcol reload, which signals $MAINPID) reloads the TLS material without a restart.
  const reloaded = new Promise<void>((resolve) => {
    child.stdout?.on('data', () => {
      if (/"reason":"SIGHUP"[^\n]*"msg":"reloaded the TLS material"/.test(out)) resolve();
    });
  });
  child.kill('SIGHUP');
  await reloaded;
  assert.equal(
    (await post(`https://127.0.0.1:${port}`, '/generic', genericRecord(), { agent, sensor: 'fw1', key }))
      .status,
    200,
  );

  child.kill('SIGTERM');
  const [code] = await exited;
  assert.equal(code, 0);
});
