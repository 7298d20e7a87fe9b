// An output's dead letters: records its receiver refused for good, one JSON line each (the stored line, the
// receiver's answer, the time) in `<dataDir>/outputs/NAME.dead-letter.ndjson`, fsynced before the cursor moves.
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { OUTPUTS_DIR } from '../data-dir/data-layout.js';
import { appendFileDurably, type Owner } from '../data-dir/file-owner.js';

export interface DeadLetter {
  /** When it was refused (ISO 8601). */
  at: string;
  /** The receiver's answer (status and reason). */
  answer: string;
  /** The stored line, parsed (the record as stored). */
  record: Record<string, unknown>;
}

export function deadLetterPath(dataDir: string, name: string): string {
  return join(dataDir, OUTPUTS_DIR, `${name}.dead-letter.ndjson`);
}

/** Appends the refused records and fsyncs the file: they are on disk before the batch is acked. */
export function appendDeadLetters(
  dataDir: string,
  name: string,
  letters: readonly { line: string; answer: string }[],
  at: string,
  owner: Owner | null,
): void {
  if (letters.length === 0) return;
  const path = deadLetterPath(dataDir, name);
  mkdirSync(join(dataDir, OUTPUTS_DIR), { recursive: true, mode: 0o750 });
  const text = letters
    .map((l) => `{"at":${JSON.stringify(at)},"answer":${JSON.stringify(l.answer)},"record":${l.line}}\n`)
    .join('');
  // A torn last line (a power cut or a full disk mid-append) is ended first: glued to it, the first new letter
  // would be unreadable too.
  appendFileDurably(path, endsTorn(path) ? `\n${text}` : text, 0o640, owner);
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
 * The record ids of an output's last `count` dead letters (fewer when the file holds fewer): what a batch sent
 * again after a crash may find already written (DESIGN 13: a record is dead-lettered once). Reads backwards,
 * so a long file costs no more than its tail.
 */
export function lastDeadLetterIds(dataDir: string, name: string, count: number): Set<string> {
  let fd: number;
  try {
    fd = openSync(deadLetterPath(dataDir, name), 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Set();
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
    const ids = new Set<string>();
    for (const line of lines.filter((l) => l !== '').slice(-count)) {
      try {
        const id = (JSON.parse(line) as DeadLetter).record.id;
        if (typeof id === 'string') ids.add(id);
      } catch {}
    }
    return ids;
  } finally {
    closeSync(fd);
  }
}

/** Every dead letter of an output, oldest first (a torn last line, left by a crash, is skipped). */
export function readDeadLetters(dataDir: string, name: string): DeadLetter[] {
  return readDeadLetterFile(deadLetterPath(dataDir, name));
}

export function readDeadLetterFile(path: string): DeadLetter[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const letters: DeadLetter[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      letters.push(JSON.parse(line) as DeadLetter);
    } catch {}
  }
  return letters;
}
