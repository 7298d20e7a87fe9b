// What a command may touch of the outside world, injected so tests can run commands in-process.
import { Writable } from 'node:stream';
import { clean, cleanC1, cleanText, safeJsonLine } from './terminal-text.js';

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
 * Every human-readable output, one line feed at the end. Lines (an array) stay one line each: every one is cleaned
 * as a field is (clean()), so a value from outside inside one (a sender's threat name) cannot end it and forge the
 * next. A text (a string) is cleaned keeping its line feeds (cleanText), for text whose lines are the program's own:
 * setup instructions, a table whose cells table.ts cleaned.
 */
export function write(stream: NodeJS.WritableStream, text: string | readonly string[]): void {
  const safe = typeof text === 'string' ? cleanText(text) : text.map(clean).join('\n');
  stream.write(safe.endsWith('\n') ? safe : `${safe}\n`);
}
