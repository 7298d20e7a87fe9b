// Runs the real CLI binary in a clean environment (no THREATCOL_* leaking in from the caller).
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { endChild, guard, watched } from './children.js';

export const BIN = fileURLToPath(new URL('../../bin/threatcol', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('THREATCOL_') && k !== 'STATE_DIRECTORY' && !k.startsWith('LISTEN_'))
      env[k] = v;
  }
  env.NO_COLOR = '1';
  return { ...env, ...extra };
}

export interface CliOptions {
  env?: Record<string, string>;
  input?: string;
  timeoutMs?: number;
  /** Run as this user (root only), e.g. 65534 to see what an ordinary user gets. */
  uid?: number;
  /** A wrapper command in front of node, e.g. `unshare --mount ...`. */
  prefix?: string[];
  /** Another copy of bin/threatcol (an installation elsewhere). */
  bin?: string;
  /** Another Node runtime (the one a package bundles). */
  node?: string;
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).result;
}

/** Every stored record as `threats tail --json --no-follow` prints it: the oracle of the read commands' tests. */
export async function tailJson(args: string[], env: Record<string, string> = {}): Promise<StoredRecord[]> {
  const tail = await runCli(['threats', 'tail', '--json', '--no-follow', '-n', '100000', ...args], { env });
  if (tail.code !== 0) throw new Error(`threats tail exited ${tail.code}: ${tail.stderr}`);
  return tail.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as StoredRecord);
}

/** The CLI started in the background: its process (to kill it mid-command) and its outcome. */
export function startCli(
  args: string[],
  options: CliOptions = {},
): { child: ChildProcess; result: Promise<CliResult> } {
  const argv = watched([
    ...(options.prefix ?? []),
    options.node ?? process.execPath,
    options.bin ?? BIN,
    ...args,
  ]);
  const child = guard(
    spawn(argv[0] as string, argv.slice(1), {
      env: cleanEnv(options.env),
      stdio: 'pipe',
      ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
    }),
  );
  const result = new Promise<CliResult>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // A hang guard only, generous for a loaded box.
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
  return { child, result };
}

/** `sensor add NAME --json` against a data dir; returns the key. */
export async function addSensorCli(
  dataDir: string,
  name: string,
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<string> {
  const r = await runCli(['sensor', 'add', name, '--data-dir', dataDir, '--json', ...extra], { env });
  if (r.code !== 0) throw new Error(`sensor add failed (${r.code}): ${r.stderr}`);
  return (JSON.parse(r.stdout) as { key: string }).key;
}

export interface ServeProcess {
  child: ChildProcess;
  port: number;
  url: string;
  /** http://127.0.0.1:<port> of the admin listener, or null when it is off. */
  adminUrl: string | null;
  /** Every log line printed so far, parsed. */
  logs: Record<string, unknown>[];
  stderr: () => string;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Arguments of `threatcol serve` for tests: loopback, port 0, JSON logs, the given data directory. */
export function serveArgs(dataDir: string, extra: string[] = []): string[] {
  return [
    'serve',
    '--data-dir',
    dataDir,
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--log-format',
    'json',
    // Many collectors run at once in the suite: each gets its own admin port (a later --admin-listen wins).
    '--admin-listen',
    '127.0.0.1:0',
    ...extra,
  ];
}

/** How long ServeProcess.stop() waits for the exit before it kills serve and fails. */
const STOP_GUARD_MS = 60_000;

/** Starts `threatcol serve` on 127.0.0.1 port 0 and waits until it listens. */
export function spawnServe(
  dataDir: string,
  extraArgs: string[] = [],
  options: {
    env?: Record<string, string>;
    timeoutMs?: number;
    prefix?: string[];
    node?: string;
    bin?: string;
  } = {},
): Promise<ServeProcess> {
  // `prefix`: a wrapper command in front of node, e.g. strace to inject faults. `node`, `bin`: another
  // installation (an extracted package).
  const argv = watched([
    ...(options.prefix ?? []),
    options.node ?? process.execPath,
    options.bin ?? BIN,
    ...serveArgs(dataDir, extraArgs),
  ]);
  return new Promise((resolve, reject) => {
    // Guarded: ended by the file's teardown when the test's own did not (a test that timed out).
    const child = guard(
      spawn(argv[0] as string, argv.slice(1), {
        env: cleanEnv(options.env),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const logs: Record<string, unknown>[] = [];
    let stderr = '';
    let buffered = '';
    let started = false;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
      child.on('exit', (code, signal) => res({ code, signal }));
    });
    // Only a hang guard (serve's start-up time is the benchmark's business): generous for a loaded box.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start in time: ${stderr}`));
    }, options.timeoutMs ?? 120_000);
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      buffered += d;
      let nl = buffered.indexOf('\n');
      while (nl !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        nl = buffered.indexOf('\n');
        let entry: Record<string, unknown>;
        try {
          entry = JSON.parse(line) as Record<string, unknown>;
        } catch {
          entry = { raw: line };
        }
        logs.push(entry);
        if (!started && entry.msg === 'threatcol is listening') {
          started = true;
          clearTimeout(timer);
          const port = entry.port as number;
          const admin = logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('admin listener'));
          resolve({
            child,
            port,
            url: `https://127.0.0.1:${port}`,
            adminUrl: admin ? (admin.url as string) : null,
            logs,
            stderr: () => stderr,
            exited,
            async stop(signal: NodeJS.Signals = 'SIGTERM') {
              if (child.exitCode === null && child.signalCode === null) child.kill(signal);
              // A hang guard (serve bounds its own stop at 12 s): a serve that never exits fails the test with
              // its last log lines, instead of holding it until the runner's timeout says nothing.
              let timer: NodeJS.Timeout | undefined;
              const hung = new Promise<never>((_, rejectStop) => {
                timer = setTimeout(() => {
                  child.kill('SIGKILL');
                  const tail = logs.slice(-10).map((l) => JSON.stringify(l));
                  rejectStop(
                    new Error(`serve did not exit 60 s after ${signal}; its last lines:\n${tail.join('\n')}`),
                  );
                }, STOP_GUARD_MS);
              });
              try {
                return await Promise.race([exited, hung]);
              } finally {
                clearTimeout(timer);
              }
            },
          });
        }
      }
    });
    void exited.then(({ code, signal }) => {
      if (!started) {
        clearTimeout(timer);
        reject(new Error(`serve exited early (${code ?? signal}): ${stderr}`));
      }
    });
  });
}

export interface Tail {
  child: ChildProcess;
  lines: string[];
  stderr: () => string;
  /** Resolves once `n` lines have arrived; rejects after the timeout. */
  waitFor(n: number, timeoutMs?: number): Promise<string[]>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `threatcol threats tail ARGS` running in the background; its stdout collected line by line. */
export function spawnTail(
  t: { after(fn: () => unknown): void },
  args: string[],
  env: Record<string, string> = {},
): Tail {
  const argv = watched([process.execPath, BIN, 'threats', 'tail', ...args]);
  const child = guard(
    spawn(argv[0] as string, argv.slice(1), {
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const lines: string[] = [];
  let buffered = '';
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    buffered += d;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  t.after(() => endChild(child));
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    waitFor(n, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`got ${lines.length} of ${n} lines; stderr: ${stderr}`)),
          timeoutMs,
        );
        const check = () => {
          if (lines.length >= n) {
            clearTimeout(timer);
            resolve(lines.slice(0, n));
          } else waiters.push(check);
        };
        check();
      });
    },
  };
}
