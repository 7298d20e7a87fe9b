// Writes JSON responses and error bodies in the catalogue's shape.
import type { ServerResponse } from 'node:http';
import { CATALOGUE, type ErrorCode, type ErrorDetail, errorBody } from '../errors.js';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: string,
  headers?: Record<string, string>,
): void {
  if (res.headersSent || res.destroyed) return;
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-store');
  if (headers) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
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
