// A syslog sensor for the RELP tests: a self-signed client certificate the sensor pins (format cef), the identity
// a RELP client presents with it, and `send syslog --relp` presenting it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { addSensorCli, type CliResult, runCli } from './cli.js';
import { writeSelfSigned } from './self-signed.js';

/** The offers librelp's client sends in its `open`. */
export const LIBRELP_OFFERS =
  'relp_version=0\nrelp_software=librelp,1.11.0,http://librelp.adiscon.com\ncommands=syslog';

export interface RelpIdentity {
  cert: string;
  key: string;
  certPath: string;
  keyPath: string;
}

/** Adds sensor `name` (syslog, cef) pinning a new certificate written into `dataDir`; that certificate and key. */
export async function addRelpSensor(dataDir: string, name: string): Promise<RelpIdentity> {
  const certPath = join(dataDir, `${name}.pem`);
  const keyPath = join(dataDir, `${name}.key`);
  writeSelfSigned(certPath, keyPath, { cn: name });
  await addSensorCli(dataDir, name, ['--syslog', '--format', 'cef', '--client-cert', certPath]);
  return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8'), certPath, keyPath };
}

/** `threatcol send syslog --relp --format cef --sample` of `count` messages over `concurrency` sessions, as JSON. */
export function sendRelpSamples(
  port: number,
  identity: { certPath: string; keyPath: string },
  count: number,
  concurrency: number,
): Promise<CliResult> {
  return runCli([
    'send',
    'syslog',
    '--relp',
    '--format',
    'cef',
    '--sample',
    '--count',
    String(count),
    '--concurrency',
    String(concurrency),
    '--url',
    `127.0.0.1:${port}`,
    '--client-cert',
    identity.certPath,
    '--client-key',
    identity.keyPath,
    '--insecure',
    '--json',
  ]);
}
