// The one error catalogue: stable code, HTTP status, CLI exit code and message for every failure threatcol reports.

/** sysexits(3) codes used by the CLI. */
export const EXIT = {
  OK: 0,
  USAGE: 64,
  DATAERR: 65,
  NOINPUT: 66,
  UNAVAILABLE: 69,
  SOFTWARE: 70,
  IOERR: 74,
  NOPERM: 77,
  CONFIG: 78,
} as const;

export interface CatalogueEntry {
  status: number;
  exit: number;
  message: string;
}

/**
 * Every code threatcol can answer or exit with. Retired codes stay listed.
 * `status` is the HTTP status (0 for codes that never reach HTTP), `exit` the CLI exit code.
 */
export const CATALOGUE = {
  NOT_FOUND: {
    status: 404,
    exit: EXIT.USAGE,
    message: 'no such endpoint: use POST /firewall or POST /generic',
  },
  METHOD_NOT_ALLOWED: { status: 405, exit: EXIT.USAGE, message: 'only POST is allowed on this endpoint' },
  AUTH_MISSING: { status: 401, exit: EXIT.NOPERM, message: 'authentication header missing' },
  AUTH_INVALID: { status: 401, exit: EXIT.NOPERM, message: 'unknown sensor or wrong key' },
  SENSOR_REVOKED: { status: 403, exit: EXIT.NOPERM, message: 'this sensor has been revoked' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    exit: EXIT.DATAERR,
    message: 'Content-Type must be application/json; Content-Encoding may only be gzip',
  },
  BODY_TOO_LARGE: { status: 413, exit: EXIT.DATAERR, message: 'request body is larger than the limit' },
  HEADERS_TOO_LARGE: { status: 431, exit: EXIT.DATAERR, message: 'request headers are too large' },
  BAD_REQUEST: { status: 400, exit: EXIT.DATAERR, message: 'malformed HTTP request' },
  REQUEST_TIMEOUT: { status: 408, exit: EXIT.UNAVAILABLE, message: 'the request was not received in time' },
  INVALID_ENCODING: { status: 400, exit: EXIT.DATAERR, message: 'the gzip body could not be decompressed' },
  INVALID_JSON: { status: 400, exit: EXIT.DATAERR, message: 'the body is not valid JSON' },
  VALIDATION_FAILED: {
    status: 400,
    exit: EXIT.DATAERR,
    message: 'the body does not match the record schema',
  },
  RATE_LIMITED: {
    status: 429,
    exit: EXIT.UNAVAILABLE,
    message: 'this sensor is sending faster than its rate limit',
  },
  UNAVAILABLE: {
    status: 503,
    exit: EXIT.UNAVAILABLE,
    message: 'the collector cannot store records right now',
  },
  INTERNAL: { status: 500, exit: EXIT.SOFTWARE, message: 'internal error' },
  // Admin listener only: the dashboard's feeds are at their bounds (docs/operations.md, Dashboard).
  DASHBOARD_BUSY: {
    status: 503,
    exit: EXIT.UNAVAILABLE,
    message: 'too many dashboard feeds are open or reading back records; try again shortly',
  },
  // CLI-side codes (never sent over HTTP).
  USAGE: { status: 0, exit: EXIT.USAGE, message: 'invalid command line' },
  CONFIG_INVALID: { status: 0, exit: EXIT.CONFIG, message: 'the configuration is invalid' },
  SENSOR_EXISTS: { status: 0, exit: EXIT.DATAERR, message: 'a sensor with this name already exists' },
  SENSOR_NOT_FOUND: { status: 0, exit: EXIT.DATAERR, message: 'no sensor with this name' },
  INVALID_ARGUMENT: { status: 0, exit: EXIT.DATAERR, message: 'invalid argument' },
  REGISTRY_LOCKED: {
    status: 0,
    exit: EXIT.UNAVAILABLE,
    message: 'the sensor registry is locked by another process',
  },
  REGISTRY_CORRUPT: { status: 0, exit: EXIT.DATAERR, message: 'the sensor registry file cannot be read' },
  PERMISSION_DENIED: {
    status: 0,
    exit: EXIT.NOPERM,
    message: 'permission denied: run as root or as the service user (sudo -u threatcol threatcol ...)',
  },
  NO_DATA_DIR: { status: 0, exit: EXIT.NOINPUT, message: 'the data directory does not exist' },
  LISTEN_FAILED: { status: 0, exit: EXIT.UNAVAILABLE, message: 'cannot listen on the configured address' },
  TLS_INVALID: { status: 0, exit: EXIT.CONFIG, message: 'the TLS certificate or key cannot be used' },
  STORE_FAILED: { status: 0, exit: EXIT.IOERR, message: 'the record store failed; the daemon stopped' },
  CONNECTION_FAILED: { status: 0, exit: EXIT.UNAVAILABLE, message: 'cannot reach the collector' },
  CHECK_FAILED: {
    status: 0,
    exit: EXIT.CONFIG,
    message: 'threatcol check found a problem in the installation or configuration',
  },
  OUTPUT_NOT_FOUND: { status: 0, exit: EXIT.DATAERR, message: 'no output with this name' },
  FEED_EXISTS: { status: 0, exit: EXIT.DATAERR, message: 'a feed with this name already exists' },
  FEED_NOT_FOUND: { status: 0, exit: EXIT.DATAERR, message: 'no feed with this name' },
  DECISION_NOT_FOUND: { status: 0, exit: EXIT.DATAERR, message: 'no such block or allow entry' },
  OUTPUT_UNSUPPORTED: { status: 0, exit: EXIT.CONFIG, message: 'this store backend cannot run outputs' },
  OUTPUT_FAILED: {
    status: 0,
    exit: EXIT.UNAVAILABLE,
    message: 'the output could not deliver to its receiver',
  },
  SYSLOG_REFUSED: {
    status: 0,
    exit: EXIT.NOPERM,
    message:
      'the collector refused the syslog connection: no sensor matches its address or client certificate',
  },
  SYSLOG_OTHER_SENSOR: {
    status: 0,
    exit: EXIT.NOPERM,
    message: 'the syslog connection would be taken as another sensor than the one given with --sensor',
  },
  ADMIN_TOKEN_REFUSED: {
    status: 0,
    exit: EXIT.NOPERM,
    message: "the running daemon's admin listener refused admin.token",
  },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof CATALOGUE;

export interface ErrorDetail {
  path: string;
  message: string;
  [extra: string]: unknown;
}

/** An error with a catalogue code; callers match on `.code`, never on the message. */
export class ThreatcolError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    message?: string,
    options?: { details?: ErrorDetail[]; headers?: Record<string, string>; cause?: unknown },
  ) {
    super(
      message ?? CATALOGUE[code].message,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'ThreatcolError';
    this.code = code;
    this.details = options?.details;
    this.headers = options?.headers;
  }

  get status(): number {
    return CATALOGUE[this.code].status;
  }

  get exitCode(): number {
    return CATALOGUE[this.code].exit;
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(CATALOGUE, value);
}

/** The HTTP error body: `{"error": {"code", "message", "details"?}}`. */
export function errorBody(code: ErrorCode, message?: string, details?: ErrorDetail[]): string {
  const error: { code: ErrorCode; message: string; details?: ErrorDetail[] } = {
    code,
    message: message ?? CATALOGUE[code].message,
  };
  if (details !== undefined && details.length > 0) error.details = details;
  return JSON.stringify({ error });
}

const PERMISSION_CODES = new Set(['EACCES', 'EPERM', 'EROFS']);

/** True for a file-system error that is about permissions (or a read-only file system), not corruption. */
export function isPermissionError(error: unknown): boolean {
  return PERMISSION_CODES.has((error as NodeJS.ErrnoException | null)?.code ?? '');
}

/**
 * PERMISSION_DENIED naming the path and who may act on it. `path` defaults to the one the error carries;
 * `action` says what was being done ("read", "lock", "create").
 */
export function permissionDenied(error: unknown, path?: string, action = 'use'): ThreatcolError {
  const e = error as NodeJS.ErrnoException;
  const where = path ?? e.path ?? 'a file';
  const why = e.code === 'EROFS' ? 'the file system is read-only' : `${e.code}: permission denied`;
  return new ThreatcolError(
    'PERMISSION_DENIED',
    `cannot ${action} ${where} (${why}): run as root or as the service user (sudo -u threatcol threatcol ...)`,
    { cause: error },
  );
}
