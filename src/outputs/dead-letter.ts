// An output's dead letters: records its receiver refused for good, one JSON line each (the stored line, the
// receiver's answer, the time), fsynced before the cursor moves; bounded on disk by the output's
// `deadLetterMaxBytes` (the oldest parts dropped and counted) and read back a line at a time, never whole.
import { closeSync, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import type { Logger } from 'pino';
import { OUTPUT_DEFAULTS } from '../config/outputs-schema.js';
import { appendFileDurably, type Owner } from '../data-dir/file-owner.js';
import {
  claimHeld,
  countLines,
  type DeadLetterFile,
  deadLetterPath,
  dropFile,
  fileLines,
  listDeadLetterFiles,
  outputsDir,
  rotateDeadLetters,
  sizeOf,
} from './dead-letter-files.js';

export { deadLetterPath } from './dead-letter-files.js';

export interface DeadLetter {
  /** When it was refused (ISO 8601). */
  at: string;
  /** The receiver's answer (status and reason). */
  answer: string;
  /** The stored line, parsed (the record as stored). */
  record: Record<string, unknown>;
}

export interface DeadLetterBound {
  /** The most the output's dead-letter files may hold together. */
  maxBytes: number;
  /** Where the count of dropped dead letters is logged. */
  logger?: Logger | null;
}

/** The file appended to is rotated at this size: dropping the oldest part drops about an eighth of the cap. */
export function partBytes(maxBytes: number): number {
  return Math.max(4096, Math.floor(maxBytes / 8));
}

/**
 * Appends the refused records and fsyncs the file: they are on disk before the batch is acked. Then keeps the
 * output's dead letters within `bound.maxBytes`: the file is rotated at an eighth of it, and the oldest parts
 * are deleted while all of them together are larger (counted, and logged at warn). Returns how many went.
 */
export function appendDeadLetters(
  dataDir: string,
  name: string,
  letters: readonly { line: string; answer: string }[],
  at: string,
  owner: Owner | null,
  bound: DeadLetterBound = { maxBytes: OUTPUT_DEFAULTS.deadLetterMaxBytes },
): { records: number; bytes: number } {
  if (letters.length === 0) return { records: 0, bytes: 0 };
  const path = deadLetterPath(dataDir, name);
  mkdirSync(outputsDir(dataDir), { recursive: true, mode: 0o750 });
  const text = letters
    .map((l) => `{"at":${JSON.stringify(at)},"answer":${JSON.stringify(l.answer)},"record":${l.line}}\n`)
    .join('');
  // A torn last line (a power cut or a full disk mid-append) is ended first: glued to it, the first new letter
  // would be unreadable too.
  appendFileDurably(path, endsTorn(path) ? `\n${text}` : text, 0o640, owner);
  if (sizeOf(path) >= partBytes(bound.maxBytes)) rotateDeadLetters(dataDir, name);
  const dropped = enforceCap(dataDir, name, bound.maxBytes);
  if (dropped.records > 0 || dropped.bytes > 0) {
    bound.logger?.warn(
      { records: dropped.records, bytes: dropped.bytes, maxBytes: bound.maxBytes },
      'dead letters over deadLetterMaxBytes: the oldest dropped',
    );
  }
  return dropped;
}

/** Deletes the oldest parts (never the file appended to, nor one a live `--retry` is sending) over the cap. */
function enforceCap(dataDir: string, name: string, maxBytes: number): { records: number; bytes: number } {
  const files = listDeadLetterFiles(dataDir, name).map((f) => ({ ...f, size: sizeOf(f.path) }));
  let total = files.reduce((sum, f) => sum + f.size, 0);
  const dropped = { records: 0, bytes: 0 };
  for (const file of files) {
    if (total <= maxBytes) break;
    if (file.seq === Infinity || claimHeld(file.claimedBy)) continue;
    const gone = dropFile(file);
    total -= file.size;
    if (gone) {
      dropped.records += gone.records;
      dropped.bytes += gone.bytes;
    }
  }
  return dropped;
}

function endsTorn(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    return size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a;
  } finally {
    closeSync(fd);
  }
}

/** The largest read when looking for a dead letter's line end from the file's end. */
const TAIL_CHUNK = 65_536;

/**
 * The record ids of an output's last `count` dead letters (fewer when there are fewer): what a batch sent
 * again after a crash may find already written (DESIGN 13: a record is dead-lettered once). Reads backwards
 * from the newest file, so a long history costs no more than its tail.
 */
export function lastDeadLetterIds(dataDir: string, name: string, count: number): Set<string> {
  const ids = new Set<string>();
  const files = listDeadLetterFiles(dataDir, name).filter((f) => f.claimedBy === null);
  let wanted = count;
  for (const file of files.reverse()) {
    if (wanted <= 0) break;
    const lines = tailLines(file.path, wanted);
    wanted -= lines.length;
    for (const line of lines) {
      try {
        const id = (JSON.parse(line) as DeadLetter).record.id;
        if (typeof id === 'string') ids.add(id);
      } catch {}
    }
  }
  return ids;
}

/** The ids an output dead-lettered in batches it has not seen acknowledged (deadLetterMemory). */
export interface DeadLetterMemory {
  has(id: string): boolean;
  /** Written to the dead letters now. */
  add(id: string): void;
  /** A batch (or a group summary) holding these records was acknowledged: it is not handed over again. */
  settled(records: Iterable<{ readonly id: string }>): void;
}

/**
 * What an output dead-lettered and has not seen acknowledged, so that a batch handed over again, whenever it
 * comes (after a restart, after a failed ack; on NATS behind newer batches), finds its refused records and does
 * not write them twice. It starts, when first asked (before this output writes any), with the output's last
 * `count` dead letters: a batch the last run dead-lettered and died before acking may be among them. Those are
 * taken as written only while they are still listed (read again when one is met): one a `--retry` delivered
 * since, or the size bound dropped, is written again when refused again (an `outputs replay`), never lost. An
 * id goes when a batch holding it is acknowledged, and past `max` ids the oldest go first.
 */
export function deadLetterMemory(
  dataDir: string,
  name: string,
  options: { count: number; max: number },
): DeadLetterMemory {
  /** Written by this run, not yet acknowledged. */
  const ids = new Set<string>();
  /** The last run's last dead letters, read when first asked. */
  let fromFile: Set<string> | null = null;
  const loaded = (): Set<string> => {
    fromFile ??= lastDeadLetterIds(dataDir, name, options.count);
    return fromFile;
  };
  /** What the file lists now, read again at most once between two writes or acknowledgements. */
  let listed: Set<string> | null = null;
  return {
    has(id) {
      if (ids.has(id)) return true;
      const earlier = loaded();
      if (!earlier.has(id)) return false;
      listed ??= lastDeadLetterIds(dataDir, name, options.count);
      if (listed.has(id)) return true;
      earlier.delete(id);
      return false;
    },
    add(id) {
      listed = null;
      loaded().delete(id);
      ids.delete(id);
      ids.add(id);
      for (const oldest of ids) {
        if (ids.size <= options.max) break;
        ids.delete(oldest);
      }
    },
    settled(records) {
      listed = null;
      if (ids.size === 0 && (fromFile === null || fromFile.size === 0)) return;
      for (const record of records) {
        ids.delete(record.id);
        fromFile?.delete(record.id);
      }
    },
  };
}

/** A file's last `count` whole lines (fewer when it holds fewer). */
function tailLines(path: string, count: number): string[] {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  try {
    let end = fstatSync(fd).size;
    const chunks: Buffer[] = [];
    let lineEnds = 0;
    // Whole lines only: one more line end than the lines wanted (the file ends with one), or the file's start.
    while (end > 0 && lineEnds <= count) {
      const size = Math.min(TAIL_CHUNK, end);
      const chunk = Buffer.alloc(size);
      readSync(fd, chunk, 0, size, end - size);
      chunks.unshift(chunk);
      for (const byte of chunk) if (byte === 0x0a) lineEnds += 1;
      end -= size;
    }
    const lines = Buffer.concat(chunks).toString('utf8').split('\n');
    if (end > 0) lines.shift();
    return lines.filter((l) => l !== '').slice(-count);
  } finally {
    closeSync(fd);
  }
}

/** One dead letter read back, with the file it is in. */
export interface ReadLetter {
  letter: DeadLetter;
  file: DeadLetterFile;
}

/**
 * Every dead letter of an output, oldest first, a line at a time: the rotated parts, those a `--retry` holds
 * or left (from where it got to), then the file appended to. Unreadable lines (a torn last line) are skipped.
 */
export function* readDeadLetters(dataDir: string, name: string): Generator<ReadLetter> {
  for (const file of listDeadLetterFiles(dataDir, name)) {
    for (const { line } of fileLines(file.path, file.offset)) {
      const letter = parseLetter(line);
      if (letter) yield { letter, file };
    }
  }
}

export function parseLetter(line: string): DeadLetter | null {
  try {
    const letter = JSON.parse(line) as DeadLetter;
    return letter !== null &&
      typeof letter === 'object' &&
      typeof letter.record === 'object' &&
      letter.record !== null
      ? letter
      : null;
  } catch {
    return null;
  }
}

/** How many dead letters an output has (what `outputs list` shows): line feeds counted, nothing parsed. */
export function countDeadLetters(dataDir: string, name: string): number {
  return listDeadLetterFiles(dataDir, name).reduce((sum, f) => sum + countLines(f.path, f.offset), 0);
}
