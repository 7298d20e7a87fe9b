// How far an output is behind in the files backend: the records stored after its cursor and the age of the
// oldest of them, for `outputs list`, metrics and /readyz.
import type { SeriesPosition } from './output-positions.js';
import { segmentsBySeries } from './output-positions.js';
import { openSegment, readLinesAt } from './segment-lines.js';

const CHUNK = 1024 * 1024;
const NEWLINE = 0x0a;

export interface Lag {
  records: number;
  /** received_at (epoch ms) of the oldest record after the cursor; null when none. */
  oldest: number | null;
}

/** Counts the complete lines after each series' position (every line, whether the output's filter takes it). */
export async function measureLag(threats: string, series: Record<string, SeriesPosition>): Promise<Lag> {
  let records = 0;
  let oldest: number | null = null;
  for (const [key, segments] of segmentsBySeries(threats)) {
    const position = series[key];
    for (const segment of segments) {
      if (position && segment.file < position.file) continue;
      const handle = await openSegment(segment.path);
      if (!handle) continue;
      try {
        const size = await handle.size();
        let offset = position && segment.file === position.file ? position.offset : 0;
        // The first record after the position tells the age; the rest is only counted.
        const first = await readLinesAt(handle, offset, size, 64 * 1024);
        const at = first.find((l) => l.record)?.record?.received_at;
        if (at !== undefined) {
          const t = Date.parse(at);
          if (oldest === null || t < oldest) oldest = t;
        }
        const buf = Buffer.allocUnsafe(CHUNK);
        while (offset < size) {
          const bytesRead = await handle.read(buf, Math.min(CHUNK, size - offset), offset);
          if (bytesRead === 0) break;
          for (let i = buf.indexOf(NEWLINE, 0); i !== -1 && i < bytesRead; i = buf.indexOf(NEWLINE, i + 1)) {
            records += 1;
          }
          offset += bytesRead;
        }
      } finally {
        await handle.close();
      }
    }
  }
  return { records, oldest };
}
