// Test fixture: fills a data directory's record log with ~N bytes of valid stored records, written directly
// as segment files (the way the daemon names and rotates them), so a big store takes seconds, not hours.
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load-config.js';
import { firewallRoute } from '../../src/inputs/https/firewall-route.js';
import { segmentFileName, threatsDir, utcDay } from '../../src/store/files/segments.js';
import { firewallRecord } from './payloads.js';

const ID_MARK = '00000000-0000-7000-8000-000000000000';

export interface Prefilled {
  bytes: number;
  records: number;
  segments: number;
  ms: number;
}

/** Writes `totalBytes` of records into today's segments (full ones, then a last one half full). */
export function prefillStore(dataDir: string, totalBytes: number): Prefilled {
  const started = performance.now();
  const { config } = loadConfig({ env: {}, defaultConfigPath: '/nonexistent', overrides: { dataDir } });
  const segmentMax = config.store.segmentMaxBytes;
  const now = Date.now();
  const record = firewallRoute.build(firewallRecord(), {
    id: () => ID_MARK,
    receivedAt: new Date(now - 86_400_000 / 2).toISOString(),
    sensor: 'bench',
    remoteAddr: '127.0.0.1',
    timezone: 'UTC',
    repaired: false,
    rules: config.firewall,
    ascii: true,
    plainStrings: true,
  });
  const [head, tail] = JSON.stringify(record).split(ID_MARK) as [string, string];
  const lineBytes = head.length + ID_MARK.length + tail.length + 1;
  const dir = threatsDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const day = utcDay(now);
  const base = now - 86_400_000 / 2;
  const perChunk = Math.floor((4 * 1024 * 1024) / lineBytes);
  let records = 0;
  let written = 0;
  let seq = 0;
  while (written < totalBytes) {
    seq += 1;
    const fd = openSync(join(dir, segmentFileName(day, seq)), 'w', 0o640);
    let size = 0;
    const left = totalBytes - written;
    // The last segment stays below the rotation bound, so the daemon appends to it.
    const target = left > segmentMax ? segmentMax : Math.min(left, segmentMax / 2);
    while (size + lineBytes <= target) {
      const n = Math.min(perChunk, Math.floor((target - size) / lineBytes));
      let chunk = '';
      for (let i = 0; i < n; i++) chunk += `${head}${fakeUuidV7(base, records + i)}${tail}\n`;
      size += writeSync(fd, chunk);
      records += n;
    }
    closeSync(fd);
    written += size;
    if (size === 0) break;
  }
  return { bytes: written, records, segments: seq, ms: performance.now() - started };
}

/** A well-formed, unique, time-ordered UUIDv7 (one per microsecond from `baseMs`). */
function fakeUuidV7(baseMs: number, n: number): string {
  const ms = (baseMs + Math.floor(n / 1000)).toString(16).padStart(12, '0');
  const sub = (n % 1000).toString(16).padStart(3, '0');
  const rand = n.toString(16).padStart(12, '0');
  return `${ms.slice(0, 8)}-${ms.slice(8)}-7${sub}-8000-${rand}`;
}
