// Reads what follows an output's position in every writer series and offers it line by line in id order (a
// k-way merge of the series' heads), moving past segments a series has drained: the read side of a feed.
import { outputLineOf } from '../output-line.js';
import type { SkippedRecords } from '../skipped-records.js';
import type { OutputLine } from '../store.js';
import type { SeriesPosition } from './output-positions.js';
import { segmentsBySeries } from './output-positions.js';
import type { SegmentTails } from './segment-tails.js';
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
  /** A line that is not a stored record (not an empty one): where it is, counted when the position passes it. */
  skipped?: string;
}

/**
 * One series' chunk being offered: its lines (null: not a stored record) and where each ends, the next one to
 * offer, and the segment they are in. Arrays side by side, not an object per line: a chunk holds hundreds.
 */
interface Chunk {
  entries: (OutputLine | null)[];
  ends: number[];
  /** Where the lines that are not stored records are, by their index (not the empty ones). */
  skipped: Map<number, string> | null;
  at: number;
  /** The last record passed and not yet named in the series' position (its id is made once, not per line). */
  taken: OutputLine | null;
  file: string;
  /** The read reached the end of the series' newest segment: nothing more to read in this gather. */
  last: boolean;
}

/** Where to read: the segments' directory, the feed's open segments, how much of each line is checked. */
export interface GatherOptions {
  threats: string;
  tails: SegmentTails;
  check: 'record' | 'head';
  /** Counts the lines that are not stored records. */
  skipped?: SkippedRecords;
}

/**
 * Reads forward from `read` in every series and offers lines in id order (a k-way merge of the series' heads)
 * to `offer`, advancing `read` past each line taken or passed; stops at the first 'stop'. True when stopped.
 */
export async function gather(
  options: GatherOptions,
  read: Positions,
  offer: (line: Candidate) => 'take' | 'pass' | 'stop',
): Promise<boolean> {
  const heads = new Map<string, Chunk>();
  const series = segmentsBySeries(options.threats);
  await options.tails.retain(
    new Set([...series.values()].flatMap((segments) => segments.map((s) => s.path))),
  );
  const dry = new Set<string>();
  // Handed to `offer` for each line, filled again each time: `offer` reads it before it returns.
  const offered: Candidate = { entry: null, end: 0 };
  for (;;) {
    let best: Chunk | null = null;
    let bestKey = '';
    /** The best head's id, read only when another series has a head to compare it with. */
    let bestId: string | null = null;
    for (const [key, segments] of series) {
      let chunk = heads.get(key);
      // A series whose chunk is used up reads its next one: a batch fills while records are there.
      if ((chunk === undefined || chunk.at === chunk.ends.length) && !dry.has(key)) {
        if (chunk?.last) {
          dry.add(key);
          continue;
        }
        if (chunk) nameTaken(chunk, read.get(key));
        chunk = await readSeries(key, segments, read, options);
        heads.set(key, chunk);
        if (chunk.ends.length === 0) dry.add(key);
      }
      if (!chunk || chunk.at === chunk.ends.length) continue;
      if (best === null) {
        best = chunk;
        bestKey = key;
        bestId = null;
        continue;
      }
      bestId ??= best.entries[best.at]?.id ?? '';
      const id = chunk.entries[chunk.at]?.id ?? '';
      if (id < bestId) {
        best = chunk;
        bestKey = key;
        bestId = id;
      }
    }
    if (best === null) {
      for (const [key, chunk] of heads) nameTaken(chunk, read.get(key));
      return false;
    }
    const entry = best.entries[best.at] ?? null;
    const end = best.ends[best.at] as number;
    const skipped = best.skipped?.get(best.at);
    offered.entry = entry;
    offered.end = end;
    if (skipped === undefined) delete offered.skipped;
    else offered.skipped = skipped;
    if (offer(offered) === 'stop') {
      for (const [key, chunk] of heads) nameTaken(chunk, read.get(key));
      return true;
    }
    if (skipped !== undefined) options.skipped?.note(skipped);
    best.at++;
    // The position is this series' own object (readSeries made it): moved in place, one line at a time.
    const position = read.get(bestKey) as SeriesPosition;
    position.file = best.file;
    position.offset = end;
    if (entry !== null) best.taken = entry;
  }
}

/** The position names the last record its series passed (checkPositions compares it after a cut-back). */
function nameTaken(chunk: Chunk, position: SeriesPosition | undefined): void {
  if (chunk.taken !== null && position !== undefined) position.id = chunk.taken.id;
  chunk.taken = null;
}

/** The next chunk of complete lines of one series after its position, moving past drained segments. */
async function readSeries(
  key: string,
  segments: SegmentName[],
  read: Positions,
  options: GatherOptions,
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
    const first = segment ? await linesAfter(options, segment.path, position.offset) : null;
    if (first && first.ends.length > 0)
      return { ...first, at: 0, taken: null, file: current, last: first.atEnd && !next };
    if (!next) return { entries: [], ends: [], skipped: null, at: 0, taken: null, file: current, last: true };
    // The writer never returns to a segment once it opened a newer one: a last read drains it, then move on.
    const drain = segment ? await linesAfter(options, segment.path, position.offset) : null;
    if (drain && drain.ends.length > 0) return { ...drain, at: 0, taken: null, file: current, last: false };
    if (segment) await options.tails.release(segment.path);
    position = { file: next.file, offset: 0 };
    read.set(key, position);
  }
}

/**
 * The complete lines after `offset`, a chunk's worth (an empty line only moves the end of the one before it), and
 * whether they reached the segment's end.
 */
async function linesAfter(
  options: GatherOptions,
  path: string,
  offset: number,
): Promise<Pick<Chunk, 'entries' | 'ends' | 'skipped'> & { atEnd: boolean }> {
  const chunk = await options.tails.chunkAt(path, offset, CHUNK);
  if (chunk === null) return { entries: [], ends: [], skipped: null, atEnd: true };
  const { buf, last } = chunk;
  const entries: (OutputLine | null)[] = [];
  const ends: number[] = [];
  let skipped: Map<number, string> | null = null;
  let start = 0;
  while (start <= last) {
    const nl = buf.indexOf(NEWLINE, start);
    if (nl > start) {
      const entry = outputLineOf(buf, start, nl, options.check);
      if (entry === null) {
        skipped ??= new Map();
        skipped.set(ends.length, `${path} offset ${offset + start}`);
      }
      entries.push(entry);
      ends.push(offset + nl + 1);
    } else if (ends.length > 0) ends[ends.length - 1] = offset + nl + 1;
    else {
      entries.push(null);
      ends.push(offset + nl + 1);
    }
    start = nl + 1;
  }
  return { entries, ends, skipped, atEnd: chunk.atEnd };
}
