// The service manager's readiness protocol (sd_notify(3)) for Type=notify units: READY=1 once listening,
// RELOADING=1 / READY=1 around a reload, STOPPING=1. Node cannot send unix datagrams, so each message goes
// through systemd-notify, which waits until systemd has processed it (sd_notify_barrier, systemd >= 246):
// that is what makes NotifyAccess=all with a short-lived sender reliable.
import { spawn } from 'node:child_process';
import type { Logger } from 'pino';

export interface SdNotifier {
  /** Sends the fields in one message; messages go out in call order. A no-op without NOTIFY_SOCKET. */
  notify(fields: Record<string, string>): Promise<void>;
  /** Resolves once every message sent so far has been handled. */
  idle(): Promise<void>;
}

export interface SdNotifierOptions {
  env: Record<string, string | undefined>;
  logger: Logger;
  /** The sender program (default systemd-notify, found on PATH). */
  command?: string;
}

export function createSdNotifier(options: SdNotifierOptions): SdNotifier {
  const socket = options.env.NOTIFY_SOCKET;
  const command = options.command ?? 'systemd-notify';
  let chain: Promise<void> = Promise.resolve();
  let warned = false;

  function send(fields: Record<string, string>): Promise<void> {
    const args = Object.entries(fields).map(([k, v]) => `${k}=${v}`);
    return new Promise((resolve) => {
      const child = spawn(command, args, { env: options.env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const fail = (reason: string) => {
        // One warning: under Type=notify a lost READY=1 makes `systemctl start` time out, which says the rest.
        if (!warned) options.logger.warn({ err: reason, sent: args }, 'cannot notify systemd');
        warned = true;
        resolve();
      };
      child.on('error', (error) => fail(error.message));
      child.on('close', (code) =>
        code === 0 ? resolve() : fail(`${command} exited ${code}: ${stderr.trim()}`),
      );
    });
  }

  return {
    notify(fields) {
      if (!socket) return Promise.resolve();
      chain = chain.then(() => send(fields));
      return chain;
    },
    idle: () => chain,
  };
}

/** CLOCK_MONOTONIC in microseconds, as MONOTONIC_USEC= wants it (libuv's hrtime reads that clock on Linux). */
export function monotonicUsec(): string {
  return (process.hrtime.bigint() / 1000n).toString();
}
