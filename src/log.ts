// Creates the pino logger: NDJSON on stdout for journald, pretty output only on a terminal or on request.
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
}

export function createLogger(options: LoggerOptions): Logger {
  const { pino } = loadPino();
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
