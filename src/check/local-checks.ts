// `threatcol check`, the local part: TLS material (readable, key matches, expiry) and the data directory
// (exists, owner, modes, free space).
import { existsSync, lstatSync, readdirSync, readFileSync, statfsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadedConfig } from '../config/load-config.js';
import { REGISTRY_FILE, THREATS_DIR } from '../data-dir/data-layout.js';
import { daysUntilExpiry, readTlsPair, selfSignedPaths, type TlsMaterial } from '../tls/certificate.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface CheckResult {
  name: string;
  status: CheckStatus;
  message: string;
}

/** Free space below this is a FAIL when the configuration sets no `store.minFreeBytes`. */
const DEFAULT_MIN_FREE_BYTES = 256 * 1024 * 1024;
const MIB = 1024 * 1024;

export function checkTls(
  loaded: LoadedConfig,
  now: number,
): { results: CheckResult[]; tls: TlsMaterial | null } {
  const { config, dataDir } = loaded;
  const configured = config.tls.cert !== null && config.tls.key !== null;
  const paths = configured
    ? { certPath: config.tls.cert as string, keyPath: config.tls.key as string }
    : selfSignedPaths(dataDir);
  if (!configured && !existsSync(paths.certPath) && !existsSync(paths.keyPath)) {
    return {
      results: [
        {
          name: 'tls',
          status: 'ok',
          message: `no certificate configured and none generated yet: serve creates a self-signed one in ${paths.certPath}`,
        },
      ],
      tls: null,
    };
  }
  let tls: TlsMaterial;
  try {
    tls = readTlsPair(paths.certPath, paths.keyPath, !configured);
  } catch (error) {
    return { results: [{ name: 'tls', status: 'fail', message: (error as Error).message }], tls: null };
  }
  const results: CheckResult[] = [
    {
      name: 'tls',
      status: 'ok',
      message: `${tls.certPath} and ${tls.keyPath} readable, key matches the certificate (sha256 ${tls.fingerprint})${tls.selfSigned ? ', self-signed' : ''}`,
    },
  ];
  const days = daysUntilExpiry(tls.notAfter, now);
  const until = tls.notAfter.toISOString();
  if (days === null) {
    results.push({ name: 'certificate expiry', status: 'ok', message: `valid until ${until}` });
  } else if (days < 0) {
    results.push({ name: 'certificate expiry', status: 'fail', message: `expired on ${until}: renew it` });
  } else {
    results.push({
      name: 'certificate expiry',
      status: 'warn',
      message: `expires on ${until} (in ${days} days): renew it; the daemon reloads it without restart`,
    });
  }
  return { results, tls };
}

export function checkDataDir(loaded: LoadedConfig, uid: number): CheckResult[] {
  const { config, dataDir } = loaded;
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(dataDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      return [
        {
          name: 'data directory',
          status: 'warn',
          message: `${dataDir} does not exist yet: serve (or systemd's StateDirectory=) creates it`,
        },
      ];
    }
    return [{ name: 'data directory', status: 'fail', message: `cannot use ${dataDir}: ${code}` }];
  }
  if (!st.isDirectory()) {
    return [{ name: 'data directory', status: 'fail', message: `${dataDir} is not a directory` }];
  }
  const results: CheckResult[] = [{ name: 'data directory', status: 'ok', message: `${dataDir} exists` }];
  const ownerName = userName(st.uid);
  if (uid !== 0 && st.uid !== uid) {
    results.push({
      name: 'owner',
      status: 'fail',
      message: `${dataDir} belongs to ${ownerName}, not to this user (uid ${uid}): the daemon cannot write it`,
    });
  } else if (uid === 0 && st.uid === 0) {
    results.push({
      name: 'owner',
      status: 'warn',
      message: `${dataDir} belongs to root: a service running as the threatcol user cannot write it (systemd's StateDirectory= fixes this at start)`,
    });
  } else {
    const strangers = foreignFiles(dataDir, st.uid);
    results.push(
      strangers.length === 0
        ? { name: 'owner', status: 'ok', message: `${dataDir} and its files belong to ${ownerName}` }
        : {
            name: 'owner',
            status: 'fail',
            message: `files not owned by ${ownerName} (the daemon may not be able to use them): ${strangers.join(', ')}; fix: chown -R ${ownerName}: ${dataDir}`,
          },
    );
  }
  results.push(checkModes(dataDir, st.mode));
  results.push(checkFreeSpace(dataDir, config));
  return results;
}

function checkModes(dataDir: string, dirMode: number): CheckResult {
  const open: string[] = [];
  for (const file of [REGISTRY_FILE, 'tls/key.pem']) {
    const path = join(dataDir, file);
    try {
      const mode = statSync(path).mode & 0o777;
      if (mode & 0o077) open.push(`${file} (${octal(mode)})`);
    } catch {}
  }
  if (open.length > 0) {
    return {
      name: 'modes',
      status: 'fail',
      message: `readable by others: ${open.join(', ')}; expected 0600 (chmod 600)`,
    };
  }
  if (dirMode & 0o002) {
    return {
      name: 'modes',
      status: 'fail',
      message: `${dataDir} is writable by everyone (${octal(dirMode)})`,
    };
  }
  if (dirMode & 0o077) {
    return {
      name: 'modes',
      status: 'warn',
      message: `${dataDir} is ${octal(dirMode)}; expected 0700 (records hold internal addresses)`,
    };
  }
  return { name: 'modes', status: 'ok', message: `${dataDir} is 0700, the registry and key 0600` };
}

function checkFreeSpace(dataDir: string, config: LoadedConfig['config']): CheckResult {
  // store.minFreeBytes is the daemon's own bound when the configuration has one.
  const minFree = (config.store as { minFreeBytes?: number }).minFreeBytes ?? DEFAULT_MIN_FREE_BYTES;
  try {
    const fs = statfsSync(dataDir);
    const free = fs.bavail * fs.bsize;
    const text = `${Math.floor(free / MIB)} MiB free on the file system of ${dataDir}`;
    if (free < minFree) {
      return {
        name: 'free space',
        status: 'fail',
        message: `${text}: below ${Math.floor(minFree / MIB)} MiB`,
      };
    }
    return { name: 'free space', status: 'ok', message: text };
  } catch (error) {
    return { name: 'free space', status: 'fail', message: `cannot tell: ${(error as Error).message}` };
  }
}

/** Files in the data directory, tls/ and threats/ (not deeper) whose owner is not the directory's. */
function foreignFiles(dataDir: string, uid: number): string[] {
  const found: string[] = [];
  for (const dir of [dataDir, join(dataDir, 'tls'), join(dataDir, THREATS_DIR)]) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(dir, name);
      try {
        if (lstatSync(path).uid !== uid) found.push(path);
      } catch {}
      if (found.length > 5) return [...found.slice(0, 5), '…'];
    }
  }
  return found;
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

/** The user's name from /etc/passwd, or `uid N`. */
export function userName(uid: number): string {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name && Number(id) === uid) return `${name} (uid ${uid})`;
    }
  } catch {}
  return `uid ${uid}`;
}
