// What a command may touch of the outside world, injected so tests can run commands in-process.
import { cleanText, safeJsonLine } from './terminal-text.js';

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}

/**
 * Every `--json` output but the NDJSON streams: one document, indented by two spaces, one trailing newline;
 * C1, DEL and bidi controls escaped (senders control some of the strings; see safeJsonLine).
 */
export function writeJson(stream: NodeJS.WritableStream, value: unknown): void {
  stream.write(`${safeJsonLine(JSON.stringify(value, null, 2))}\n`);
}

/**
 * Every human-readable output: cleaned as a whole (cleanText), since most of it carries text from outside (a
 * sensor's description, a server's answer, an error naming a stored value), one line feed at the end.
 */
export function write(stream: NodeJS.WritableStream, text: string): void {
  const safe = cleanText(text);
  stream.write(safe.endsWith('\n') ? safe : `${safe}\n`);
}
