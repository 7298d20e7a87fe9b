// Creates the pino logger: NDJSON for log shippers, pretty output on a terminal, and readable lines with their
// syslog priority when the stream is the systemd journal.
import { fstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { DestinationStream, Logger } from 'pino';
import type Pretty from 'pino-pretty';

// Both required when a logger is made, not when this module is imported: a CLI command that logs nothing
// starts without them (pino-pretty only for a terminal). Both are CommonJS, so require() is synchronous.
const requireHere = createRequire(import.meta.url);
const loadPino = (): typeof import('pino') => requireHere('pino') as typeof import('pino');
const loadPretty = (): typeof Pretty => requireHere('pino-pretty') as typeof Pretty;

export type { Logger } from 'pino';

export interface LoggerOptions {
  level: string;
  format: 'auto' | 'json' | 'pretty';
  /** Where lines go (serve: stdout, for journald; other commands: stderr). */
  stream: DestinationStream | NodeJS.WritableStream;
  isTty?: boolean;
  /**
   * The stream is connected to the journal (isJournalStream): each line starts with its syslog priority
   * (`<4>`, sd-daemon(3)), so `journalctl -p warning` finds warnings; `auto` then writes readable text, `json`
   * stays JSON for log shippers.
   */
  journal?: boolean;
}

export function createLogger(options: LoggerOptions): Logger {
  const { pino } = loadPino();
  const usePretty =
    options.format === 'pretty' || (options.format === 'auto' && options.isTty === true && !options.journal);
  const base = {
    level: options.level,
    base: { service: 'threatcol' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // The key must never reach a log line, whatever object a caller passes.
    redact: {
      paths: ['key', '*.key', 'headers["x-auth_key"]', 'headers["x-auth-key"]'],
      censor: '[redacted]',
    },
  };
  if (usePretty) {
    return pino(
      base,
      loadPretty()({ destination: options.stream, colorize: options.isTty === true, sync: true }),
    );
  }
  if (options.journal) {
    return pino(base, journalDestination(options.stream, options.format === 'json' ? 'json' : 'text'));
  }
  return pino(base, options.stream as DestinationStream);
}

/**
 * Whether `fd` is the journal's stream: systemd sets JOURNAL_STREAM to its "device:inode" (systemd.exec(5)).
 * The variable alone is not enough: it is inherited by children whose output goes elsewhere.
 */
export function isJournalStream(journalStream: string | undefined, fd: number | undefined): boolean {
  if (!journalStream || fd === undefined) return false;
  const m = /^(\d+):(\d+)$/.exec(journalStream);
  if (!m) return false;
  try {
    const st = fstatSync(fd, { bigint: true });
    return st.dev === BigInt(m[1] as string) && st.ino === BigInt(m[2] as string);
  } catch {
    return false;
  }
}

/** pino's levels as syslog priorities: fatal crit, error err, warn warning, info info, debug and trace debug. */
export function syslogPriority(level: number): number {
  if (level >= 60) return 2;
  if (level >= 50) return 3;
  if (level >= 40) return 4;
  if (level >= 30) return 6;
  return 7;
}

/** Fields every line has, which the journal records by itself (time, unit) or which say nothing there. */
const IMPLIED = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname']);

/** One pino JSON line as the journal should get it: `<priority>` then the JSON, or the message and key=value. */
export function journalLine(json: string, format: 'json' | 'text'): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const priority = `<${syslogPriority(Number(entry.level))}>`;
  if (format === 'json') return `${priority}${json.trimEnd()}\n`;
  // One journal entry per line: a newline inside a message or value would start an entry without a priority.
  const parts = [String(entry.msg ?? '').replace(/\s*\n\s*/g, ' ')];
  for (const [key, value] of Object.entries(entry)) {
    if (IMPLIED.has(key)) continue;
    const plain = typeof value === 'string' && /^[^\s"=\\\p{C}]+$/u.test(value);
    parts.push(`${key}=${plain ? value : JSON.stringify(value)}`);
  }
  return `${priority}${parts.join(' ')}\n`;
}

function journalDestination(stream: LoggerOptions['stream'], format: 'json' | 'text'): DestinationStream {
  return {
    write(line: string) {
      stream.write(journalLine(line, format));
    },
  };
}
