// Shared tools of the reliability suite: soak switch, process probes (/proc), a serve spawner that can wrap the binary.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { BIN, cleanEnv, type ServeProcess } from '../helpers/cli.js';

/** `npm run soak` sets SOAK=1 (not a THREATCOL_* name: the config loader rejects unknown ones). */
export const SOAK = process.env.SOAK === '1';

/** The bounded value in `npm test`, the long one in `npm run soak`. */
export function soak<T>(bounded: T, long: T): T {
  return SOAK ? long : bounded;
}

/** Resident set size of a process, in bytes. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

/** Open file descriptors of a process (sockets included). */
export function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** CPU time (user + system) a process has used so far, in ms. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/**
 * Like helpers/cli.ts spawnServe, with a wrapper command in front of node (e.g. strace) and any host.
 * Resolves once serve logs that it listens.
 */
export function spawnServeWrapped(
  dataDir: string,
  options: { prefix?: string[]; args?: string[]; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ServeProcess> {
  const prefix = options.prefix ?? [];
  const argv = [
    ...prefix,
    process.execPath,
    BIN,
    'serve',
    '--data-dir',
    dataDir,
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--log-format',
    'json',
    ...(options.args ?? []),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), {
      env: cleanEnv(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const logs: Record<string, unknown>[] = [];
    let stderr = '';
    let buffered = '';
    let started = false;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
      child.on('exit', (code, signal) => res({ code, signal }));
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start in time: ${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
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
          resolve({
            child,
            port,
            url: `https://127.0.0.1:${port}`,
            logs,
            stderr: () => stderr,
            exited,
            async stop(signal: NodeJS.Signals = 'SIGTERM') {
              if (child.exitCode === null && child.signalCode === null) child.kill(signal);
              return exited;
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

/** Stops a serve process at the end of a test whatever happened (SIGKILL if SIGTERM is not enough in 10 s). */
export function stopAfter(t: { after(fn: () => unknown): void }, serve: ServeProcess): void {
  t.after(async () => {
    const timer = setTimeout(() => serve.child.kill('SIGKILL'), 10_000);
    await serve.stop();
    clearTimeout(timer);
  });
}
