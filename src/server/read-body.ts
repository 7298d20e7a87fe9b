// Reads a request body with the size bound checked while streaming (and after gzip decompression).
import type { IncomingMessage } from 'node:http';
import { createGunzip } from 'node:zlib';
import { ThreatcolError } from '../errors.js';

/** Thrown when the client went away mid-body: there is nobody to answer. */
export class ClientGone extends Error {}

function tooLarge(limit: number): ThreatcolError {
  return new ThreatcolError('BODY_TOO_LARGE', `the request body is larger than ${limit} bytes`, {
    headers: { Connection: 'close' },
  });
}

/** Rejects at once when Content-Length already announces more than the limit. */
export function checkDeclaredLength(req: IncomingMessage, limit: number): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
}

export function readBody(req: IncomingMessage, limit: number, gzip: boolean): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      req.off('aborted', onAborted);
      if (error) reject(error);
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onAborted = () => settle(new ClientGone('client closed the connection'));
    req.on('aborted', onAborted);
    req.on('error', () => settle(new ClientGone('request stream error')));

    const source: NodeJS.ReadableStream = gzip ? req.pipe(createGunzip()) : req;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        if (gzip) (source as ReturnType<typeof createGunzip>).destroy();
        req.pause();
        settle(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    source.on('data', onData);
    source.on('end', () => settle(null));
    if (gzip) {
      let compressed = 0;
      req.on('data', (chunk: Buffer) => {
        compressed += chunk.length;
        if (compressed > limit) {
          req.unpipe();
          req.pause();
          settle(tooLarge(limit));
        }
      });
      source.on('error', (error: Error) => {
        settle(
          new ThreatcolError(
            'INVALID_ENCODING',
            `the gzip body could not be decompressed: ${error.message}`,
            {
              cause: error,
            },
          ),
        );
      });
    }
  });
}
