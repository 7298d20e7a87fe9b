// Writes JSON responses and error bodies in the catalogue's shape.
import type { ServerResponse } from 'node:http';
import { CATALOGUE, type ErrorCode, type ErrorDetail, errorBody } from '../../errors.js';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: string,
  headers?: Record<string, string>,
): void {
  if (res.headersSent || res.destroyed) return;
  // One writeHead with a flat list: cheaper than a setHeader per header on the hot path.
  const list: string[] = [
    'Content-Type',
    'application/json; charset=utf-8',
    'Content-Length',
    String(Buffer.byteLength(body)),
    'Cache-Control',
    'no-store',
  ];
  if (headers) for (const name in headers) list.push(name, headers[name] as string);
  res.writeHead(status, list);
  res.end(body);
}

export function sendError(
  res: ServerResponse,
  code: ErrorCode,
  message?: string,
  details?: ErrorDetail[],
  headers?: Record<string, string>,
): void {
  sendJson(res, CATALOGUE[code].status, errorBody(code, message, details), headers);
}
