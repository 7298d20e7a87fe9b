// The files backend's decisions journal: one checked line per change (`<crc32 hex> <JSON>\n`), appended and
// fsynced under the registry lock, read on top of the `decisions.json` snapshot. A line whose checksum does not
// match (torn by a power cut, or garbage a cut left in the file's tail) is skipped, never fatal.
import { crc32 } from 'node:zlib';
import { DECISION_KINDS, type DecisionChange, type DecisionKind } from '../decisions.js';

/** The first line of a journal: the snapshot generation its changes apply on top of. */
export interface JournalHeader {
  journal: 1;
  generation: number;
}

const NEWLINE = 0x0a;
const SPACE = 0x20;
/** `xxxxxxxx ` before the JSON. */
const PREFIX = 9;

function checkedLine(json: string): string {
  return `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
}

export function headerLine(generation: number): string {
  return checkedLine(JSON.stringify({ journal: 1, generation } satisfies JournalHeader));
}

/** The journal's lines for `changes`, in order (a later line for a key wins on read). */
export function changeLines(changes: readonly DecisionChange[]): string {
  let out = '';
  for (const change of changes)
    out += checkedLine(JSON.stringify({ kind: change.kind, key: change.key, value: change.value }));
  return out;
}

/** The JSON of one line (without its newline) when its checksum matches, else null. */
function checkedJson(line: Buffer): unknown {
  if (line.length <= PREFIX || line[PREFIX - 1] !== SPACE) return null;
  const sum = Number.parseInt(line.toString('latin1', 0, PREFIX - 1), 16);
  const body = line.subarray(PREFIX);
  if (!Number.isInteger(sum) || crc32(body) !== sum) return null;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
}

const KINDS = new Set<string>(DECISION_KINDS);

/** The header of a journal's first line, or null when there is none (an empty file, a bad first line). */
export function readHeader(data: Buffer): { generation: number; end: number } | null {
  const end = data.indexOf(NEWLINE);
  if (end < 0) return null;
  const header = checkedJson(data.subarray(0, end)) as Partial<JournalHeader> | null;
  if (header?.journal !== 1 || !Number.isSafeInteger(header.generation)) return null;
  return { generation: header.generation as number, end: end + 1 };
}

export interface JournalEntry {
  kind: DecisionKind;
  key: string;
  value: unknown;
}

/**
 * Calls `onEntry` for each checked change line of `data` from `from`, in order. Returns the offset after the
 * last complete line (a line without its newline yet is left for the next read) and how many lines were bad.
 */
export function readEntries(
  data: Buffer,
  from: number,
  onEntry: (entry: JournalEntry) => void,
): { end: number; bad: number } {
  let at = from;
  let bad = 0;
  for (;;) {
    const nl = data.indexOf(NEWLINE, at);
    if (nl < 0) break;
    const parsed = checkedJson(data.subarray(at, nl)) as Partial<JournalEntry> | null;
    at = nl + 1;
    if (parsed === null) bad++;
    else if (typeof parsed.kind === 'string' && KINDS.has(parsed.kind) && typeof parsed.key === 'string')
      onEntry({ kind: parsed.kind, key: parsed.key, value: parsed.value });
  }
  return { end: at, bad };
}
