// Sends one request to a collector endpoint and tells what the answer means (exit code, error code).
import type { Pool } from 'undici';
import { CATALOGUE, type ErrorCode, isErrorCode } from '../errors.js';

export interface SendTarget {
  pool: Pool;
  /** The endpoint's path, e.g. `/firewall` (or `/base/firewall` behind a proxy). */
  path: string;
  headers: Record<string, string>;
}

export interface Answer {
  status: number;
  body: string;
}

export function requestHeaders(sensor: string, key: string): Record<string, string> {
  return { 'content-type': 'application/json', 'x-auth_key': key, 'x-sensor_name': sensor };
}

export async function sendBody(target: SendTarget, body: string | Buffer): Promise<Answer> {
  const res = await target.pool.request({
    path: target.path,
    method: 'POST',
    headers: target.headers,
    body,
  });
  return { status: res.statusCode, body: await res.body.text() };
}

export interface Verdict {
  exit: number;
  /** The server's catalogue code, or CONNECTION_FAILED when the answer is not a threatcol error body. */
  code: ErrorCode | null;
  message: string | null;
}

/** 2xx exits 0; otherwise the catalogue exit code of the server's `error.code` (same as a local error). */
export function judgeAnswer(status: number, body: string): Verdict {
  if (status >= 200 && status < 300) return { exit: 0, code: null, message: null };
  let code: unknown;
  let message: unknown;
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
    code = parsed?.error?.code;
    message = parsed?.error?.message;
  } catch {
    // Not JSON: a proxy or another server answered.
  }
  if (isErrorCode(code)) {
    return {
      exit: CATALOGUE[code].exit,
      code,
      message: typeof message === 'string' ? message : CATALOGUE[code].message,
    };
  }
  // A proxy's error page or another server: the collector itself was not reached.
  return {
    exit: CATALOGUE.CONNECTION_FAILED.exit,
    code: 'CONNECTION_FAILED',
    message: `HTTP ${status} without a threatcol error body (a proxy, or not a threatcol collector?)`,
  };
}
