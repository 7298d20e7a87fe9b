// Reads what follows an output's position in every writer series and offers it line by line in id order (a
// k-way merge of the series' heads), moving past segments a series has drained: the read side of a feed.
import type { SeriesPosition } from './output-positions.js';
import { segmentsBySeries } from './output-positions.js';
import { openSegment, readLinesAt, type SegmentLine } from './segment-lines.js';
import type { SegmentName } from './segments.js';

const CHUNK = 256 * 1024;

/** Per writer series, where reading stands. */
export type Positions = Map<string, SeriesPosition>;

export interface Candidate extends SegmentLine {
  key: string;
  file: string;
}

/**
 * Reads forward from `read` in every series and offers lines in id order (a k-way merge of the series' heads)
 * to `offer`, advancing `read` past each line taken or passed; stops at the first 'stop'. True when stopped.
 */
export async function gather(
  options: { threats: string },
  read: Positions,
  offer: (line: Candidate) => 'take' | 'pass' | 'stop',
): Promise<boolean> {
  const heads = new Map<string, Candidate[]>();
  const series = segmentsBySeries(options.threats);
  const dry = new Set<string>();
  for (;;) {
    let best: string | null = null;
    let bestId = '';
    for (const [key, segments] of series) {
      let lines = heads.get(key) ?? [];
      // A series whose chunk is used up reads its next one: a batch fills while records are there.
      if (lines.length === 0 && !dry.has(key)) {
        lines = await readSeries(key, segments, read);
        heads.set(key, lines);
        if (lines.length === 0) dry.add(key);
      }
      const head = lines[0];
      if (!head) continue;
      const id = head.record?.id ?? '';
      if (best === null || id < bestId) {
        best = key;
        bestId = id;
      }
    }
    if (best === null) return false;
    const lines = heads.get(best) as Candidate[];
    const head = lines[0] as Candidate;
    const verdict = offer(head);
    if (verdict === 'stop') return true;
    lines.shift();
    const id = head.record?.id ?? read.get(best)?.id;
    read.set(best, { file: head.file, offset: head.end, ...(id === undefined ? {} : { id }) });
  }
}

/** The next chunk of complete lines of one series after its position, moving past drained segments. */
async function readSeries(key: string, segments: SegmentName[], read: Positions): Promise<Candidate[]> {
  let position = read.get(key);
  if (!position) {
    position = { file: (segments[0] as SegmentName).file, offset: 0 };
    read.set(key, position);
  }
  for (;;) {
    const current: string = position.file;
    const segment = segments.find((s) => s.file === current);
    const next: SegmentName | undefined = segments.find((s) => s.file > current);
    const lines = segment ? await linesAfter(segment.path, position.offset) : [];
    if (lines.length > 0) return lines.map((l) => ({ ...l, key, file: current }));
    if (!next) return [];
    // The writer never returns to a segment once it opened a newer one: a last read drains it, then move on.
    const last = segment ? await linesAfter(segment.path, position.offset) : [];
    if (last.length > 0) return last.map((l) => ({ ...l, key, file: current }));
    position = { file: next.file, offset: 0 };
    read.set(key, position);
  }
}

async function linesAfter(path: string, offset: number): Promise<SegmentLine[]> {
  const handle = await openSegment(path);
  if (!handle) return [];
  try {
    const size = await handle.size();
    return await readLinesAt(handle, Math.min(offset, size), size, CHUNK);
  } finally {
    await handle.close();
  }
}
