// What a command may touch of the outside world, injected so tests can run commands in-process.
import { Writable } from 'node:stream';
import { cleanC1, cleanText, safeJsonLine } from './terminal-text.js';

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
 * Where a command's log goes: on a terminal (pretty lines, whose values pino-pretty quotes as JSON, escaping
 * C0 controls but not C1 or bidi ones) through cleanC1, so a NATS server's error text cannot act on it either.
 */
export function logStream(stream: CliIo['stderr']): NodeJS.WritableStream {
  if (stream.isTTY !== true) return stream;
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      stream.write(cleanC1(String(chunk)));
      callback();
    },
  });
}

/**
 * Every human-readable output: cleaned as a whole (cleanText), since most of it carries text from outside (a
 * sensor's description, a server's answer, an error naming a stored value), one line feed at the end.
 */
export function write(stream: NodeJS.WritableStream, text: string): void {
  const safe = cleanText(text);
  stream.write(safe.endsWith('\n') ? safe : `${safe}\n`);
}
