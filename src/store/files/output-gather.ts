// Reads what follows an output's position in every writer series and offers it line by line in id order (a
// k-way merge of the series' heads), moving past segments a series has drained: the read side of a feed.
import { outputLineOf } from '../output-line.js';
import type { OutputLine } from '../store.js';
import type { SeriesPosition } from './output-positions.js';
import { segmentsBySeries } from './output-positions.js';
import { openSegment, readChunkAt } from './segment-lines.js';
import type { SegmentName } from './segments.js';

const CHUNK = 256 * 1024;
const NEWLINE = 0x0a;

/** Per writer series, where reading stands. */
export type Positions = Map<string, SeriesPosition>;

export interface Candidate {
  /** null: a line that is not a stored record (passed by the position, never handed over). */
  entry: OutputLine | null;
  /** Byte offset just after the line's newline: where reading resumes after it. */
  end: number;
}

/** One series' chunk being offered: its lines, the next one to offer, and the segment they are in. */
interface Chunk {
  lines: Candidate[];
  at: number;
  file: string;
}

/**
 * Reads forward from `read` in every series and offers lines in id order (a k-way merge of the series' heads)
 * to `offer`, advancing `read` past each line taken or passed; stops at the first 'stop'. True when stopped.
 * `check`: how much of each line is checked (OutputFeedOptions).
 */
export async function gather(
  options: { threats: string; check: 'record' | 'head' },
  read: Positions,
  offer: (line: Candidate) => 'take' | 'pass' | 'stop',
): Promise<boolean> {
  const heads = new Map<string, Chunk>();
  const series = segmentsBySeries(options.threats);
  const dry = new Set<string>();
  for (;;) {
    let best: Chunk | null = null;
    let bestKey = '';
    let bestId = '';
    for (const [key, segments] of series) {
      let chunk = heads.get(key);
      // A series whose chunk is used up reads its next one: a batch fills while records are there.
      if ((chunk === undefined || chunk.at === chunk.lines.length) && !dry.has(key)) {
        chunk = await readSeries(key, segments, read, options.check);
        heads.set(key, chunk);
        if (chunk.lines.length === 0) dry.add(key);
      }
      const head = chunk?.lines[chunk.at];
      if (!chunk || !head) continue;
      const id = head.entry?.id ?? '';
      if (best === null || id < bestId) {
        best = chunk;
        bestKey = key;
        bestId = id;
      }
    }
    if (best === null) return false;
    const head = best.lines[best.at] as Candidate;
    if (offer(head) === 'stop') return true;
    best.at++;
    // The position is this series' own object (readSeries made it): moved in place, one line at a time.
    const position = read.get(bestKey) as SeriesPosition;
    position.file = best.file;
    position.offset = head.end;
    if (head.entry !== null) position.id = head.entry.id;
  }
}

/** The next chunk of complete lines of one series after its position, moving past drained segments. */
async function readSeries(
  key: string,
  segments: SegmentName[],
  read: Positions,
  check: 'record' | 'head',
): Promise<Chunk> {
  let position = read.get(key);
  if (!position) {
    position = { file: (segments[0] as SegmentName).file, offset: 0 };
    read.set(key, position);
  }
  for (;;) {
    const current: string = position.file;
    const segment = segments.find((s) => s.file === current);
    const next: SegmentName | undefined = segments.find((s) => s.file > current);
    const lines = segment ? await linesAfter(segment.path, position.offset, check) : [];
    if (lines.length > 0) return { lines, at: 0, file: current };
    if (!next) return { lines: [], at: 0, file: current };
    // The writer never returns to a segment once it opened a newer one: a last read drains it, then move on.
    const last = segment ? await linesAfter(segment.path, position.offset, check) : [];
    if (last.length > 0) return { lines: last, at: 0, file: current };
    position = { file: next.file, offset: 0 };
    read.set(key, position);
  }
}

/** The complete lines after `offset`, a chunk's worth; an empty line only moves the end of the one before it. */
async function linesAfter(path: string, offset: number, check: 'record' | 'head'): Promise<Candidate[]> {
  const handle = await openSegment(path);
  if (!handle) return [];
  let chunk: Awaited<ReturnType<typeof readChunkAt>>;
  let base = offset;
  try {
    const size = await handle.size();
    base = Math.min(offset, size);
    chunk = await readChunkAt(handle, base, size, CHUNK);
  } finally {
    await handle.close();
  }
  if (chunk === null) return [];
  const { buf, last } = chunk;
  const lines: Candidate[] = [];
  let start = 0;
  while (start <= last) {
    const nl = buf.indexOf(NEWLINE, start);
    if (nl > start) lines.push({ entry: outputLineOf(buf, start, nl, check), end: base + nl + 1 });
    else if (lines.length > 0) (lines[lines.length - 1] as Candidate).end = base + nl + 1;
    else lines.push({ entry: null, end: base + nl + 1 });
    start = nl + 1;
  }
  return lines;
}
