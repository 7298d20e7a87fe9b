// podman for the image test: a store of its own in a temporary directory (images, containers, volumes, run state),
// what this machine needs to run a container at all (runc, cgroupfs, no events journal, no systemd timers), and
// a teardown that removes everything the store holds (containers first, so nothing stays mounted), also after a
// failure.
import { execFile, execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Podman {
  /** `podman ARGS` on the test's store: stdout, stderr and the exit code (a non-zero one is not thrown). */
  (
    args: string[],
    options?: { timeoutMs?: number },
  ): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Removes every container, volume and image of the store, then the store. */
  remove(): Promise<void>;
}

/** Why the image cannot be run here, or null. */
export function podmanUnavailable(): string | null {
  if (process.getuid?.() !== 0)
    return 'needs root (podman with a store of its own, a read-only container as uid 65532)';
  for (const [tool, pkg] of [
    ['podman', 'podman'],
    ['runc', 'runc'],
  ]) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is missing (apt-get install ${pkg})`;
    }
  }
  return null;
}

export function podmanIn(dir: string): Podman {
  // crun refuses this machine's cgroups v1 hybrid; without systemd, cgroupfs and no events journal.
  const prefix = [
    '--root',
    join(dir, 'root'),
    '--runroot',
    join(dir, 'run'),
    '--tmpdir',
    join(dir, 'tmp'),
    '--storage-driver',
    'overlay',
    '--runtime',
    'runc',
    '--cgroup-manager',
    'cgroupfs',
    '--events-backend',
    'none',
  ];
  const podman = (async (args: string[], options: { timeoutMs?: number } = {}) => {
    try {
      const { stdout, stderr } = await run('podman', [...prefix, ...args], {
        timeout: options.timeoutMs ?? 120_000,
        killSignal: 'SIGKILL',
        maxBuffer: 16 * 1024 * 1024,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number | string; stdout?: string; stderr?: string };
      if (typeof e.code !== 'number') throw error;
      return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }) as Podman;
  podman.remove = async () => {
    await podman(['rm', '--all', '--force', '--time', '0']);
    await podman(['volume', 'rm', '--all', '--force']);
    await podman(['rmi', '--all', '--force']);
    // Not `podman system reset`: it would also remove the machine's podman networks, which are not the store's.
    rmSync(dir, { recursive: true, force: true });
  };
  return podman;
}
