// LazyFS for power-cut tests: the vendored build (test/tools/build-lazyfs.sh) and a mount whose un-fsynced data
// a cut drops (`lazyfs::clear-cache`, then unmount and mount again on the same backing directory).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { guard, watched } from './children.js';
import { until } from './until.js';

const BUILD_SCRIPT = fileURLToPath(new URL('../tools/build-lazyfs.sh', import.meta.url));
/** The build script's "cannot be built or used here" exit code. */
const CANNOT = 3;

export type LazyfsAvailability = { bin: string } | { skip: string };

/**
 * The LazyFS binary, built once per source version (npm test and npm run soak build it first), or why the
 * power-cut tests cannot run here. A failed build is an error, not a skip.
 */
export async function findLazyfs(): Promise<LazyfsAvailability> {
  if (process.platform !== 'linux') return { skip: 'LazyFS is a Linux FUSE file system' };
  const build = spawnSync(BUILD_SCRIPT, [], { encoding: 'utf8', timeout: 15 * 60_000 });
  if (build.status === CANNOT) return { skip: build.stderr.trim() };
  if (build.status !== 0) {
    throw new Error(`building LazyFS failed (${build.status ?? build.signal}): ${build.stderr}`);
  }
  const bin = build.stdout.trim();
  // /dev/fuse alone is not enough: a container may forbid the mount, an ordinary user may not use allow_other.
  const cleanup: (() => unknown)[] = [];
  try {
    await mountLazyfs({ after: (fn) => cleanup.push(fn) }, bin, { cacheMiB: 1 });
  } catch (error) {
    return {
      skip: `LazyFS cannot mount here: ${(error as Error).message.trim().split('\n').slice(-3).join(' ')}`,
    };
  } finally {
    for (const fn of cleanup) await fn();
  }
  return { bin };
}

export interface LazyfsMount {
  /** The mount point: what the collector and the CLI see. */
  readonly dir: string;
  /** The backing directory: what the disk holds. Read it while unmounted to see what survived a cut. */
  readonly disk: string;
  /**
   * A power cut of everything on the mount: LazyFS drops every byte not fsynced, then it is unmounted. The
   * caller kills the processes using it first (kill -9), as the cut would. Returns LazyFS's own count of the
   * bytes it dropped, and how full its cache was; throws when it was 90 % full or more (see `cacheUsage`).
   * Mount again with `mount()`.
   */
  cut(): Promise<{ droppedBytes: number; cacheUsedPercent: number }>;
  /**
   * How full LazyFS's cache is, in % of its pages. A test must keep it well short of full: without eviction a
   * full cache writes through to the disk, and the write that fills it loses bytes that were then fsynced
   * (zeros on the disk where an fdatasync had returned 0: test/reliability/lazyfs-cache.test.ts), which a
   * power-cut test reads as acknowledged records lost.
   */
  cacheUsage(): Promise<number>;
  /** Arms a cut in the middle of an operation: LazyFS kills itself right after `op` on a path matching `pattern`. */
  cutAfter(op: 'unlink' | 'write' | 'fsync' | 'rename' | 'create', pattern: string): Promise<void>;
  /**
   * Arms a torn write: the next write to `file` (a path under `disk`) is split in `parts`, only the parts listed
   * in `persist` (1-based) reach the disk, and LazyFS dies, un-fsynced data lost, as a cut in mid-write would.
   */
  tearNextWrite(file: string, parts: number, persist: number[]): Promise<void>;
  /** Resolves once an armed fault has fired (LazyFS is gone; then `unmount()`), rejects after `limitMs`. */
  fired(limitMs: number, what: string): Promise<void>;
  /** Unmounts (a dead mount too, lazily: it may still be open in a killed process's last moments). */
  unmount(): Promise<void>;
  mount(): Promise<void>;
  /** LazyFS's log since the last mount. */
  log(): string;
}

/** Mounts LazyFS on a fresh temporary directory; unmounted and removed after the test. */
export async function mountLazyfs(
  t: { after(fn: () => unknown): void },
  bin: string,
  options: { cacheMiB?: number } = {},
): Promise<LazyfsMount> {
  // Short paths: a fault command naming a file must fit LazyFS's 100-byte FIFO read. And no "-o" in the
  // config's path, in any case: LazyFS takes an argument after --config-path that contains "-o" for a FUSE
  // option and falls back to config/default.toml (it did with a random "lfs-O…": a 2-in-62 flake per mount).
  const base = mkdtempSync(join(tmpdir(), 'lfs'));
  if (/-o/i.test(base)) throw new Error(`LazyFS cannot take its config from ${base} (a path holding "-o")`);
  const dir = join(base, 'm');
  const disk = join(base, 'd');
  const fifo = join(base, 'faults.fifo');
  const config = join(base, 'lazyfs.toml');
  mkdirSync(dir);
  mkdirSync(disk);
  // No eviction: an evicted dirty page would be written to the disk without an fsync, which a cut must not see.
  writeFileSync(
    config,
    [
      '[faults]',
      `fifo_path="${fifo}"`,
      '[cache]',
      'apply_eviction=false',
      '[cache.simple]',
      `custom_size="${options.cacheMiB ?? 256}mb"`,
      'blocks_per_page=1',
      '[filesystem]',
      'log_all_operations=false',
      'logfile=""',
      '',
    ].join('\n'),
  );

  let child: ChildProcess | null = null;
  let output = '';
  let exited: Promise<void> = Promise.resolve();
  const mounted = () => readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${dir} `);

  /** Writes one command to LazyFS's FIFO; fails at once (ENXIO) when LazyFS is not reading it. */
  const command = (text: string) => {
    // LazyFS reads its FIFO 100 bytes at a time: a longer command would arrive cut in two.
    if (Buffer.byteLength(text) >= 100) throw new Error(`LazyFS command too long: ${text}`);
    const fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    try {
      writeSync(fd, `${text}\n`);
    } finally {
      closeSync(fd);
    }
  };
  /** Sends a command and waits for LazyFS to log its answer. */
  const ask = async (text: string, answer: RegExp) => {
    const from = output.length;
    command(text);
    await until(() => answer.test(output.slice(from)), 30_000, `LazyFS's answer to ${text}`, 10).catch(
      (error: Error) => {
        // What LazyFS did say since (and whether it still runs): the cause of a missing answer.
        const since = output.slice(from).slice(-2000);
        throw new Error(
          `${error.message}; LazyFS ${child?.exitCode === null ? 'runs' : `exited (${child?.exitCode})`}, said since: ${since || '(nothing)'}`,
        );
      },
    );
    return answer.exec(output.slice(from)) as RegExpExecArray;
  };

  const handle: LazyfsMount = {
    dir,
    disk,
    fired(limitMs, what) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what}: the armed LazyFS fault did not fire in ${limitMs} ms`)),
          limitMs,
        );
      });
      return Promise.race([exited, late]).finally(() => clearTimeout(timer));
    },
    log: () => output,
    async mount() {
      output = '';
      const argv = watched([
        bin,
        dir,
        '--config-path',
        config,
        '-o',
        'allow_other',
        '-o',
        'modules=subdir',
        '-o',
        `subdir=${disk}`,
        '-f',
      ]);
      // Guarded: ended when the test process dies (the mount is then a dead one, removed by the exit hook below).
      const proc = guard(spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] }));
      child = proc;
      exited = new Promise((resolve) => proc.once('exit', () => resolve()));
      proc.stdout?.setEncoding('utf8').on('data', (d: string) => (output += d));
      proc.stderr?.setEncoding('utf8').on('data', (d: string) => (output += d));
      await until(() => mounted() || proc.exitCode !== null, 30_000, 'LazyFS mounted', 20).catch(() => {});
      if (!mounted()) throw new Error(`LazyFS did not mount on ${dir} (exit ${proc.exitCode}): ${output}`);
    },
    async cacheUsage() {
      const usage = await ask('lazyfs::display-cache-usage', /cache usage \(%pages\) is ([\d.]+)%/);
      return Number(usage[1]);
    },
    async cut() {
      const cacheUsedPercent = await handle.cacheUsage();
      const report = await ask(
        'lazyfs::unsynced-data-report',
        /report: (all data blocks are synced|total number of bytes un-fsynced: (\d+) bytes)/,
      );
      await ask('lazyfs::clear-cache', /cache is cleared/);
      await handle.unmount();
      // A full cache corrupts fsynced data (cacheUsage): a test would measure that, not the cut.
      if (cacheUsedPercent >= 90)
        throw new Error(`LazyFS's cache was ${cacheUsedPercent}% full at the cut: give it more (cacheMiB)`);
      return { droppedBytes: Number(report[2] ?? 0), cacheUsedPercent };
    },
    async cutAfter(op, pattern) {
      const fault = `lazyfs::crash::timing=after::op=${op}::from_rgx=${pattern}`;
      const answer = await ask(fault, /received: (VALID|INVALID) crash fault/);
      if (answer[1] !== 'VALID') throw new Error(`LazyFS refused ${fault}: ${output}`);
    },
    async tearNextWrite(file, parts, persist) {
      const fault = `lazyfs::torn-op::file=${file}::parts=${parts}::persist=${persist.join(',')}`;
      const answer = await ask(fault, /(configured successfully|INVALID torn-op fault)/);
      if (answer[1] !== 'configured successfully') throw new Error(`LazyFS refused ${fault}: ${output}`);
    },
    async unmount() {
      if (mounted()) {
        const r = spawnSync('fusermount3', ['-u', '-z', dir], { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`fusermount3 -u ${dir}: ${r.stderr}`);
      }
      // LazyFS exits once unmounted; one that does not is killed (its cache is gone either way).
      const timer = setTimeout(() => child?.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      child = null;
    },
  };

  const cleanup = () => {
    if (mounted()) spawnSync('fusermount3', ['-u', '-z', dir]);
    child?.kill('SIGKILL');
  };
  // A test file that dies must not leave a mount behind.
  process.once('exit', cleanup);
  t.after(async () => {
    await handle.unmount().catch(cleanup);
    process.removeListener('exit', cleanup);
    rmSync(base, { recursive: true, force: true });
  });
  await handle.mount();
  return handle;
}
