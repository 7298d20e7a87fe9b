// A throw-away systemd machine for the boot tests: a root file system (this host's own, or a debootstrapped
// Debian for the package test) read-only under a tmpfs overlay, booted by systemd-nspawn with a private network,
// with directories of the host bound in (this checkout at /usr/lib/node_modules/threatcol, the path the
// from-source units name). Everything (container, overlay, tmpfs) is removed by close().
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Shell {
  code: number;
  stdout: string;
  stderr: string;
}

export interface BootContainer {
  /** Runs `script` with /bin/sh inside the container (all its namespaces), as root. */
  sh(script: string, timeoutMs?: number): Promise<Shell>;
  close(): Promise<void>;
}

/** Why the boot test cannot run here, or null. */
export async function bootUnavailable(): Promise<string | null> {
  if (process.getuid?.() !== 0) return 'needs root (mounts and systemd-nspawn)';
  for (const tool of ['/usr/bin/systemd-nspawn', '/usr/bin/nsenter', '/lib/systemd/systemd']) {
    try {
      readFileSync(tool).subarray(0, 1);
    } catch {
      return `${tool} is missing (apt-get install systemd-container)`;
    }
  }
  return null;
}

export interface BootOptions {
  /** The root file system to boot, read-only under the overlay (default: this host's `/`). */
  lower?: string;
  /** Host directories to bind read-only: host path -> path in the container. */
  binds?: Record<string, string>;
}

/** This host's root with the checkout at /usr/lib/node_modules/threatcol, as the systemd-boot test uses it. */
export function bootContainer(checkout: string): Promise<BootContainer>;
export function bootContainer(options: BootOptions): Promise<BootContainer>;
export async function bootContainer(arg: string | BootOptions): Promise<BootContainer> {
  const options: BootOptions =
    typeof arg === 'string' ? { lower: '/', binds: { [arg]: '/usr/lib/node_modules/threatcol' } } : arg;
  const lower = options.lower ?? '/';
  const binds = options.binds ?? {};
  const base = mkdtempSync('/tmp/threatcol-boot-');
  const root = join(base, 'root');
  const mounted: string[] = [];
  let nspawn: ChildProcess | null = null;
  const machine = `threatcol-boot-${process.pid}`;
  let log = '';

  async function close(): Promise<void> {
    if (nspawn && nspawn.exitCode === null && nspawn.signalCode === null) {
      const exited = once(nspawn, 'exit');
      nspawn.kill('SIGTERM'); // nspawn halts the container
      const timer = setTimeout(() => nspawn?.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    for (const dir of mounted.reverse()) await run('umount', [dir]).catch(() => run('umount', ['-l', dir]));
    rmSync(base, { recursive: true, force: true });
    rmSync(`/run/systemd/nspawn/propagate/${machine}`, { recursive: true, force: true });
  }

  try {
    await run('mount', ['-t', 'tmpfs', '-o', 'size=1G', 'tmpfs', base]);
    mounted.push(base);
    for (const d of ['upper', 'work', 'root']) mkdirSync(join(base, d));
    await run('mount', [
      '-t',
      'overlay',
      'overlay',
      '-o',
      `lowerdir=${lower},upperdir=${join(base, 'upper')},workdir=${join(base, 'work')}`,
      root,
    ]);
    mounted.push(root);
    // Its own machine id (nspawn refuses the host's), and a target with nothing of the host's services.
    writeFileSync(join(root, 'etc/machine-id'), `${crypto.randomUUID().replaceAll('-', '')}\n`);
    writeFileSync(
      join(root, 'etc/systemd/system/threatcol-boot.target'),
      '[Unit]\nDescription=threatcol boot test\nRequires=basic.target\nAfter=basic.target\nAllowIsolate=yes\n',
    );
    for (const to of Object.values(binds)) mkdirSync(join(root, to), { recursive: true });
    nspawn = spawn(
      '/usr/bin/systemd-nspawn',
      [
        '-D',
        root,
        '-M',
        machine,
        '--boot',
        '--console=pipe',
        '--register=no',
        '--keep-unit',
        '--link-journal=no',
        '--private-network',
        ...Object.entries(binds).map(([from, to]) => `--bind-ro=${from}:${to}`),
        'systemd.unit=threatcol-boot.target',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    nspawn.stdout?.setEncoding('utf8').on('data', (d: string) => (log += d));
    nspawn.stderr?.setEncoding('utf8').on('data', (d: string) => (log += d));
    const pid1 = await containerInit(nspawn, () => log);
    const sh = async (script: string, timeoutMs = 60_000): Promise<Shell> => {
      try {
        const { stdout, stderr } = await run(
          '/usr/bin/nsenter',
          ['-t', String(pid1), '-a', '/bin/sh', '-c', script],
          {
            timeout: timeoutMs,
            env: {
              PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
              LANG: 'C.UTF-8',
              SYSTEMD_COLORS: '0',
            },
          },
        );
        return { code: 0, stdout, stderr };
      } catch (error) {
        const e = error as { code?: number; stdout?: string; stderr?: string };
        return {
          code: typeof e.code === 'number' ? e.code : -1,
          stdout: e.stdout ?? '',
          stderr: e.stderr ?? '',
        };
      }
    };
    // Until systemd's own bus is up, systemctl cannot even ask.
    const deadline = Date.now() + 120_000;
    for (;;) {
      const up = await sh('systemctl is-system-running --wait', 120_000);
      if (/running|degraded/.test(up.stdout)) break;
      if (Date.now() > deadline)
        throw new Error(`the container did not boot: ${up.stdout}${up.stderr}${log}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    return { sh, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The container's PID 1: nspawn's child running systemd. */
async function containerInit(nspawn: ChildProcess, log: () => string): Promise<number> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (nspawn.exitCode !== null) throw new Error(`systemd-nspawn exited ${nspawn.exitCode}: ${log()}`);
    let children = '';
    try {
      children = readFileSync(`/proc/${nspawn.pid}/task/${nspawn.pid}/children`, 'utf8');
    } catch {}
    for (const pid of children.trim().split(/\s+/).filter(Boolean)) {
      try {
        if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'systemd') return Number(pid);
      } catch {}
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no systemd in the container: ${log()}`);
}
