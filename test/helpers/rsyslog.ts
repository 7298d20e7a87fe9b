// A real rsyslogd (Debian's rsyslog + rsyslog-gnutls) on a loopback port with its own configuration, for the
// syslog receiver's tests (it writes every message it receives to a file, one line each), and as a sender.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Config } from '../../src/config/schema.js';
import { loadTlsMaterial } from '../../src/tls/tls-material.js';
import { endChild, guard, watched } from './children.js';
import { freeLoopbackPort } from './free-port.js';
import { until } from './until.js';

export interface Rsyslog {
  port: number;
  /** PEM of the server's self-signed certificate (TLS only): the client's `ca`. */
  ca: string | null;
  /** What rsyslog wrote: per message `MSGID STRUCTURED-DATA MSG`. */
  lines(): string[];
  start(): Promise<void>;
  stop(): Promise<void>;
  /** SIGSTOP or SIGCONT: a stalled receiver whose buffers fill, then one that reads again. */
  freeze(frozen: boolean): void;
}

/** Whether something accepts TCP connections on the loopback `port`. */
export function listening(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const probe = connect({ host: '127.0.0.1', port }, () => {
      probe.destroy();
      resolve(true);
    });
    probe.on('error', () => resolve(false));
  });
}

export interface RsyslogProcess {
  child: ChildProcess;
  /** What rsyslogd printed (its errors name the cause of a refused TLS handshake). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Runs `rsyslogd -n` with the configuration `lines` (written to `dir`) until the test ends, once it listens on
 * each of `ports` (its imtcp inputs): a sender for the syslog input's tests.
 */
export async function spawnRsyslogd(
  t: { after(fn: () => unknown): void },
  dir: string,
  lines: string[],
  ports: number[],
): Promise<RsyslogProcess> {
  const conf = join(dir, 'rsyslog.conf');
  writeFileSync(conf, `${lines.join('\n')}\n`);
  let log = '';
  const argv = watched(['rsyslogd', '-n', '-f', conf, '-i', join(dir, 'rsyslogd.pid')]);
  const child = guard(spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] }));
  child.stdout?.on('data', (d) => (log += d));
  child.stderr?.on('data', (d) => (log += d));
  const stop = () => endChild(child, { signal: 'SIGTERM' });
  t.after(stop);
  await until(
    async () => {
      if (child.exitCode !== null) throw new Error(`rsyslogd exited: ${log}`);
      for (const port of ports) if (!(await listening(port))) return false;
      return true;
    },
    15_000,
    'rsyslogd listening',
  );
  return { child, log: () => log, stop };
}

export async function startRsyslog(dir: string, transport: 'tls' | 'tcp'): Promise<Rsyslog> {
  const port = await freeLoopbackPort();
  const out = join(dir, 'received.log');
  let ca: string | null = null;
  let driver = '';
  if (transport === 'tls') {
    const tls = await loadTlsMaterial(
      { cert: null, key: null, selfSignedKeyType: 'ecdsa' } as Config['tls'],
      dir,
      null,
    );
    ca = tls.cert;
    driver =
      `  defaultNetstreamDriverCAFile="${tls.certPath}"\n` +
      `  defaultNetstreamDriverCertFile="${tls.certPath}"\n` +
      `  defaultNetstreamDriverKeyFile="${tls.keyPath}"`;
  }
  const conf = join(dir, 'rsyslog.conf');
  writeFileSync(
    conf,
    [
      `global(workDirectory="${dir}" maxMessageSize="256k"\n${driver})`,
      transport === 'tls'
        ? 'module(load="imtcp" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")'
        : 'module(load="imtcp")',
      `input(type="imtcp" address="127.0.0.1" port="${port}")`,
      'template(name="kept" type="string" string="%msgid% %structured-data% %msg%\\n")',
      `action(type="omfile" file="${out}" template="kept")`,
      '',
    ].join('\n'),
  );
  let child: ChildProcess | null = null;
  let log = '';
  const rsyslog: Rsyslog = {
    port,
    ca,
    lines: () =>
      existsSync(out)
        ? readFileSync(out, 'utf8')
            .split('\n')
            .filter((line) => line !== '')
        : [],
    async start() {
      const argv = watched(['rsyslogd', '-n', '-f', conf, '-i', join(dir, 'rsyslogd.pid')]);
      const started = guard(spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] }));
      started.stdout?.on('data', (chunk) => {
        log += chunk;
      });
      started.stderr?.on('data', (chunk) => {
        log += chunk;
      });
      let spawnError: Error | null = null;
      started.once('error', (error) => {
        spawnError = error;
      });
      child = started;
      await until(
        async () => {
          if (spawnError !== null)
            throw new Error(`rsyslogd cannot start (apt install rsyslog rsyslog-gnutls): ${spawnError}`);
          if (started.exitCode !== null) throw new Error(`rsyslogd exited ${started.exitCode}: ${log}`);
          return await listening(port);
        },
        15_000,
        'rsyslogd listening',
        50,
      );
    },
    freeze(frozen) {
      child?.kill(frozen ? 'SIGSTOP' : 'SIGCONT');
    },
    async stop() {
      const running = child;
      child = null;
      // endChild continues a frozen (SIGSTOP) rsyslogd so that it takes the SIGTERM.
      if (running !== null) await endChild(running, { signal: 'SIGTERM' });
    },
  };
  await rsyslog.start();
  return rsyslog;
}
