// The syslog figure's peer: Debian's syslog-ng run from its unpacked packages (Debian's rsyslog, which the tests
// need, conflicts with syslog-ng-core), receiving octet-counted syslog over TLS with its syslog() source into a file.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { listeningPorts, type Pinning } from './processes.js';

/** syslog-ng-core and libivykis0, plus the libraries it links that a box with rsyslog lacks. */
const PACKAGES = ['syslog-ng-core', 'libivykis0', 'libpcre3', 'libnet1', 'libwrap0'];
const VERSION = '3.38';

export interface SyslogNg {
  pid: number;
  port: number;
  /** Messages written to its file so far (lines). */
  written(): number;
  stop(): Promise<void>;
}

const libraryPath = (root: string) =>
  ['usr/lib/x86_64-linux-gnu', 'lib/x86_64-linux-gnu', 'usr/lib/syslog-ng']
    .map((d) => join(root, d))
    .join(':');

/**
 * The unpacked packages under `cacheDir/root`, downloaded with `apt-get download` (no root needed) and
 * `dpkg -x` when missing; the reason as an Error when apt cannot get them or the binary does not start.
 */
export function unpackSyslogNg(cacheDir: string): string {
  const root = join(cacheDir, 'root');
  const binary = join(root, 'usr/sbin/syslog-ng');
  if (!existsSync(binary)) {
    mkdirSync(cacheDir, { recursive: true });
    try {
      execFileSync('apt-get', ['download', ...PACKAGES], { cwd: cacheDir, stdio: 'pipe', timeout: 120_000 });
    } catch (error) {
      const e = error as { stderr?: Buffer; message: string };
      throw new Error(
        `apt-get download failed: ${(e.stderr?.toString() || e.message).trim().split('\n').at(-1)}`,
      );
    }
    for (const deb of readdirSync(cacheDir).filter((f) => f.endsWith('.deb')))
      execFileSync('dpkg', ['-x', join(cacheDir, deb), root], { stdio: 'pipe' });
  }
  execFileSync(binary, ['--version'], { env: { LD_LIBRARY_PATH: libraryPath(root) }, stdio: 'pipe' });
  return root;
}

/** syslog-ng on 127.0.0.1 (port chosen by the kernel), TLS with `certPath`, every message into `dir/out.log`. */
export async function startSyslogNg(
  root: string,
  dir: string,
  certPath: string,
  keyPath: string,
  pin: Pinning,
): Promise<SyslogNg> {
  mkdirSync(dir, { recursive: true });
  const out = join(dir, 'out.log');
  const conf = join(dir, 'syslog-ng.conf');
  // Flow control: a file destination that falls behind holds the readers back instead of dropping, as
  // threatcol's backpressure does; the windows are large enough not to throttle four connections.
  writeFileSync(
    conf,
    [
      `@version: ${VERSION}`,
      'options { stats_freq(0); log_fifo_size(100000); };',
      `source s_tls { syslog(ip("127.0.0.1") port(0) transport("tls") max-connections(8) log-iw-size(80000)`,
      `  tls(key-file("${keyPath}") cert-file("${certPath}") peer-verify(optional-untrusted))); };`,
      `destination d_file { file("${out}"); };`,
      'log { source(s_tls); destination(d_file); flags(flow-control); };',
      '',
    ].join('\n'),
  );
  const argv = [
    join(root, 'usr/sbin/syslog-ng'),
    '-F',
    '--no-caps',
    `--module-path=${join(root, 'usr/lib/syslog-ng', VERSION)}`,
    `--cfgfile=${conf}`,
    `--persist-file=${join(dir, 'persist')}`,
    `--pidfile=${join(dir, 'pid')}`,
    `--control=${join(dir, 'ctl')}`,
  ];
  const [cmd, ...args] = pin.pinned ? ['taskset', '-c', pin.serverCpu, ...argv] : argv;
  const child = spawn(cmd as string, args, {
    env: { LD_LIBRARY_PATH: libraryPath(root) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    if (err.length < 10_000) err += d;
  });
  const port = await listening(child, () => err);
  let lines = 0;
  let offset = 0;
  const buffer = Buffer.alloc(1 << 20);
  return {
    pid: child.pid as number,
    port,
    // Read on from where the last call stopped: the file is long, the count is asked for often.
    written() {
      if (!existsSync(out)) return 0;
      const fd = openSync(out, 'r');
      try {
        for (let n = readSync(fd, buffer, 0, buffer.length, offset); n > 0; ) {
          for (let i = buffer.indexOf(10); i !== -1 && i < n; i = buffer.indexOf(10, i + 1)) lines++;
          offset += n;
          n = readSync(fd, buffer, 0, buffer.length, offset);
        }
      } finally {
        closeSync(fd);
      }
      return lines;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** The port the child listens on, once it does (30 s at most). */
async function listening(child: ChildProcess, err: () => string): Promise<number> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`syslog-ng exited (${child.exitCode}): ${err()}`);
    const ports = child.pid === undefined ? [] : listeningPorts(child.pid);
    if (ports.length > 0) return ports[0] as number;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`syslog-ng did not listen in time: ${err()}`);
}
