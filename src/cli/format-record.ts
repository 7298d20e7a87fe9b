// One human line per stored record for `threats tail`: time, criticality, sensor, flow, threat; colour optional.
import type { StoredRecord } from '../records/stored-record.js';

const LABELS = ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL'] as const;
/** ANSI SGR per criticality 0..4: dim, cyan, yellow, red, bold red. */
const COLOURS = ['2', '36', '33', '31', '1;31'] as const;

/** NO_COLOR (https://no-color.org) set to anything non-empty, or a non-terminal, means plain text. */
export function useColour(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

export function formatRecordLine(record: StoredRecord, colour: boolean): string {
  const criticality = Number.isInteger(record.criticality) ? record.criticality : 2;
  const label = (LABELS[criticality] ?? 'MEDIUM').padEnd(8);
  const time = `${String(record.received_at).slice(0, 19).replace('T', ' ')}Z`;
  const src = endpoint(record.src_ip, record.src_port);
  const dst = endpoint(record.dst_ip, record.dst_port);
  const line = `${time}  ${label}  ${clean(record.sensor)}  ${src} → ${dst} ${clean(record.protocol)}  ${clean(record.threat)}`;
  if (!colour) return line;
  return `\x1b[${COLOURS[criticality] ?? COLOURS[2]}m${line}\x1b[0m`;
}

function endpoint(ip: unknown, port: unknown): string {
  const address = clean(ip);
  if (port === undefined || port === null) return address;
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly the characters refused
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** A stored line for `--json`: C1 and bidi controls escaped (still valid JSON), so no terminal acts on them. */
export function safeJsonLine(line: string): string {
  return line.replace(UNSAFE_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// JSON.stringify already escapes C0 controls; C1, DEL and bidi controls pass through it raw.
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Senders control these strings: never let them put escape sequences or line breaks on the admin's terminal. */
export function clean(value: unknown): string {
  // Bidi controls too: a sender must not be able to reorder what the admin reads on the line.
  return String(value ?? '').replace(UNSAFE, '?');
}
