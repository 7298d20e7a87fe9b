// Helpers for the service tests: certificates with a chosen validity, and the daemon started in-process with
// the options the shared harness does not pass (intervals, debounce).
import { spawn } from 'node:child_process';
import { webcrypto, X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { loadConfig } from '../../src/config/load-config.js';
import { type Daemon, type DaemonOptions, startDaemon } from '../../src/daemon/start-daemon.js';
import { createLogger } from '../../src/log.js';
import { BIN, type CliResult, cleanEnv } from '../helpers/cli.js';

x509.cryptoProvider.set(webcrypto as never);

export interface TestCert {
  cert: string;
  key: string;
  fingerprint: string;
}

/** A self-signed ECDSA P-256 certificate for localhost/127.0.0.1 that ends in `days` days (negative: expired). */
export async function makeCert(days: number, cn = 'localhost'): Promise<TestCert> {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  // As @peculiar/x509 types it: its KeyUsage lacks the ML-KEM usages that Node's own types list.
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as Parameters<
    typeof x509.X509CertificateGenerator.createSelfSigned
  >[0]['keys'];
  const notAfter = new Date(Date.now() + days * 86_400_000);
  const notBefore = new Date(Math.min(Date.now() - 120_000, notAfter.getTime() - 86_400_000));
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(8)))
      .toString('hex')
      .replace(/^[89a-f]/, '1'),
    name: `CN=${cn}`,
    notBefore,
    notAfter,
    keys,
    signingAlgorithm: algorithm,
    extensions: [
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
      ]),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  const key = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)?.join('\n')}\n-----END PRIVATE KEY-----\n`;
  const pem = cert.toString('pem');
  return { cert: pem, key, fingerprint: new X509Certificate(pem).fingerprint256 };
}

export function writeCert(c: TestCert, certPath: string, keyPath: string): void {
  writeFileSync(keyPath, c.key, { mode: 0o600 });
  writeFileSync(certPath, c.cert);
}

export interface HarnessDaemon {
  daemon: Daemon;
  port: number;
  logs: Record<string, unknown>[];
  /** Resolves with the first log line from index `from` on (already logged or future) that `match` accepts. */
  waitForLog(
    match: (line: Record<string, unknown>) => boolean,
    from?: number,
  ): Promise<Record<string, unknown>>;
}

export async function startHarnessDaemon(
  t: { after(fn: () => unknown): void },
  dataDir: string,
  overrides: Record<string, unknown>,
  options: Omit<DaemonOptions, 'loaded' | 'logger'> = {},
): Promise<HarnessDaemon> {
  const loaded = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: {
      dataDir,
      'server.host': '127.0.0.1',
      'server.port': 0,
      'admin.listen': '127.0.0.1:0',
      'log.level': 'debug',
      ...overrides,
    },
  });
  const logs: Record<string, unknown>[] = [];
  const waiters: {
    match: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const text of chunk.toString().split('\n')) {
        if (!text) continue;
        const line = JSON.parse(text) as Record<string, unknown>;
        logs.push(line);
        for (const w of waiters.splice(0)) {
          if (w.match(line)) w.resolve(line);
          else waiters.push(w);
        }
      }
      cb();
    },
  });
  const logger = createLogger({ level: 'debug', format: 'json', stream });
  const daemon = await startDaemon({ loaded, logger, ...options });
  t.after(async () => {
    daemon.stop();
    await daemon.done;
  });
  return {
    daemon,
    port: daemon.address.port,
    logs,
    waitForLog(match, from = 0) {
      const timeoutMs = 10_000;
      const found = logs.slice(from).find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(`log line not seen in ${timeoutMs} ms; got: ${logs.map((l) => l.msg).join(' | ')}`),
            ),
          timeoutMs,
        );
        waiters.push({
          match,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
  };
}

/** Runs the real binary as another user (root only), in a clean environment. */
export function runCliAs(args: string[], uid: number): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: cleanEnv({ HOME: '/nonexistent' }),
      stdio: ['ignore', 'pipe', 'pipe'],
      uid,
      gid: uid,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
