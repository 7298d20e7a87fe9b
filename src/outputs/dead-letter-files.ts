// The files an output's dead letters live in, under `<dataDir>/outputs/`: `NAME.dead-letter.ndjson` (appended
// to), the older parts it was rotated into (`NAME.dead-letter.SEQ-PID.ndjson`), and parts a `--retry` has taken
// (`….retrying-PID[-OFFSET]`: the process sending them and how many bytes of them it has done). Rotation and
// claims are renames to names no other process can pick, so concurrent writers never overwrite each other.
import { closeSync, openSync, readdirSync, readSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { OUTPUTS_DIR } from '../data-dir/data-layout.js';
import { syncDir } from '../data-dir/file-owner.js';

export interface DeadLetterFile {
  output: string;
  file: string;
  path: string;
  /** Where it sorts: rotated parts by sequence, the file being appended to last (Infinity). */
  seq: number;
  /** The process that rotated it (a tie-breaker between two rotations with one sequence). */
  writer: number;
  /** The `--retry` process that took it (0: released, left to the next one); null: not taken. */
  claimedBy: number | null;
  /** Bytes at its start already sent by a `--retry`. */
  offset: number;
}

const ACTIVE = /^([A-Za-z0-9_-]{1,64})\.dead-letter\.ndjson$/;
const PART = /^([A-Za-z0-9_-]{1,64})\.dead-letter\.(\d{1,15})-(\d{1,10})\.ndjson$/;
const CLAIMED =
  /^([A-Za-z0-9_-]{1,64})\.dead-letter\.(?:(\d{1,15})-(\d{1,10})\.)?ndjson\.retrying-(\d{1,10})(?:-(\d{1,15}))?$/;

export function outputsDir(dataDir: string): string {
  return join(dataDir, OUTPUTS_DIR);
}

export function deadLetterPath(dataDir: string, name: string): string {
  return join(outputsDir(dataDir), `${name}.dead-letter.ndjson`);
}

function parse(dir: string, file: string): DeadLetterFile | null {
  const path = join(dir, file);
  let m = ACTIVE.exec(file);
  if (m) return { output: m[1] as string, file, path, seq: Infinity, writer: 0, claimedBy: null, offset: 0 };
  m = PART.exec(file);
  if (m) {
    return {
      output: m[1] as string,
      file,
      path,
      seq: Number(m[2]),
      writer: Number(m[3]),
      claimedBy: null,
      offset: 0,
    };
  }
  m = CLAIMED.exec(file);
  if (!m) return null;
  // A whole file taken by an older --retry (`NAME.dead-letter.ndjson.retrying-PID`) is older than every part.
  return {
    output: m[1] as string,
    file,
    path,
    seq: m[2] === undefined ? 0 : Number(m[2]),
    writer: m[3] === undefined ? 0 : Number(m[3]),
    claimedBy: Number(m[4]),
    offset: m[5] === undefined ? 0 : Number(m[5]),
  };
}

/** The dead-letter files of one output (or of all, `name` null), oldest first. */
export function listDeadLetterFiles(dataDir: string, name: string | null): DeadLetterFile[] {
  const dir = outputsDir(dataDir);
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries
    .map((file) => parse(dir, file))
    .filter((f): f is DeadLetterFile => f !== null && (name === null || f.output === name))
    .sort((a, b) => a.seq - b.seq || a.writer - b.writer || a.file.localeCompare(b.file));
}

/** Renames a file within the outputs directory; false when it is gone (taken or dropped meanwhile). */
export function renameIn(dataDir: string, from: string, to: string): boolean {
  try {
    renameSync(join(outputsDir(dataDir), from), join(outputsDir(dataDir), to));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * Moves the file being appended to aside as the newest part (the next append starts a new one). The name
 * carries this process's id: two processes rotating at once pick different names, never one over the other.
 */
export function rotateDeadLetters(dataDir: string, name: string): string | null {
  const seq = listDeadLetterFiles(dataDir, name).reduce(
    (max, f) => (f.seq === Infinity ? max : Math.max(max, f.seq)),
    0,
  );
  const part = `${name}.dead-letter.${seq + 1}-${process.pid}.ndjson`;
  if (!renameIn(dataDir, `${name}.dead-letter.ndjson`, part)) return null;
  syncDir(outputsDir(dataDir));
  return part;
}

/**
 * Is the `--retry` that took a file still at it? Its process must exist and be a threatcol one (a pid reused
 * by another program since does not hold the file). 0: released.
 */
export function claimHeld(pid: number | null): boolean {
  if (pid === null || pid === 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileText(`/proc/${pid}/cmdline`).includes('threatcol');
  } catch {
    return true;
  }
}

function readFileText(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, null)).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

const CHUNK = 65_536;
/** A line longer than this is not a dead letter this collector wrote: skipped, never held whole. */
export const MAX_LINE_BYTES = 16 * 1_048_576;

/**
 * The whole lines of a file from byte `start` on, each with the offset just past it, read a chunk at a time.
 * A last line without its line feed (torn by a crash mid-append) is not given; a line over MAX_LINE_BYTES is
 * skipped. Nothing when the file is gone.
 */
export function* fileLines(path: string, start = 0): Generator<{ line: string; end: number }> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    const buffer = Buffer.alloc(CHUNK);
    let position = start;
    let pieces: Buffer[] = [];
    let pending = 0;
    let skipping = false;
    for (;;) {
      const read = readSync(fd, buffer, 0, CHUNK, position);
      if (read === 0) return;
      let from = 0;
      for (let nl = buffer.indexOf(0x0a, 0); nl !== -1 && nl < read; nl = buffer.indexOf(0x0a, from)) {
        const end = position + nl + 1;
        if (!skipping) {
          pieces.push(buffer.subarray(from, nl));
          const line = Buffer.concat(pieces).toString('utf8');
          yield { line, end };
        }
        pieces = [];
        pending = 0;
        skipping = false;
        from = nl + 1;
      }
      if (from < read && !skipping) {
        pending += read - from;
        if (pending > MAX_LINE_BYTES) {
          skipping = true;
          pieces = [];
        } else {
          pieces.push(Buffer.from(buffer.subarray(from, read)));
        }
      }
      position += read;
    }
  } finally {
    closeSync(fd);
  }
}

/** How many whole lines a file holds from byte `start` on (its dead letters, torn ones aside). */
export function countLines(path: string, start = 0): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  try {
    const buffer = Buffer.alloc(CHUNK);
    let count = 0;
    let position = start;
    for (
      let read = readSync(fd, buffer, 0, CHUNK, position);
      read > 0;
      read = readSync(fd, buffer, 0, CHUNK, position)
    ) {
      for (let nl = buffer.indexOf(0x0a); nl !== -1 && nl < read; nl = buffer.indexOf(0x0a, nl + 1))
        count += 1;
      position += read;
    }
    return count;
  } finally {
    closeSync(fd);
  }
}

/**
 * Deletes a part, counting the dead letters it held first; null when another process deleted it meanwhile
 * (that one counts them).
 */
export function dropFile(file: DeadLetterFile): { records: number; bytes: number } | null {
  const bytes = sizeOf(file.path);
  const records = countLines(file.path, file.offset);
  try {
    unlinkSync(file.path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return { records, bytes };
}
