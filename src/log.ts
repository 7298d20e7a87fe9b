// Creates the pino logger: NDJSON on stdout for journald, pretty output only on a terminal or on request.
import { createRequire } from 'node:module';
import { type DestinationStream, type Logger, pino } from 'pino';
import type Pretty from 'pino-pretty';

/** pino-pretty (and its dependencies) loaded only when a terminal gets the pretty form: CLI start-up time. */
const loadPretty = (): typeof Pretty => createRequire(import.meta.url)('pino-pretty') as typeof Pretty;

export type { Logger } from 'pino';

export interface LoggerOptions {
  level: string;
  format: 'auto' | 'json' | 'pretty';
  /** Where lines go (serve: stdout, for journald; other commands: stderr). */
  stream: DestinationStream | NodeJS.WritableStream;
  isTty?: boolean;
}

export function createLogger(options: LoggerOptions): Logger {
  const usePretty = options.format === 'pretty' || (options.format === 'auto' && options.isTty === true);
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
  return pino(base, options.stream as DestinationStream);
}
