// An output's dead letters: records its receiver refused for good, one JSON line each (the stored line, the
// receiver's answer, the time) in `<dataDir>/outputs/NAME.dead-letter.ndjson`, fsynced before the cursor moves.
import { mkdirSync, readFileSync } from 'node:fs';
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
  appendFileDurably(path, text, 0o640, owner);
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
