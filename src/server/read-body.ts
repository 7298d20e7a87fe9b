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

/** Bytes of request bodies held in memory by all requests together; bounds memory under any load. */
export class BodyBudget {
  private used = 0;

  constructor(private readonly limit: number) {}

  reserve(bytes: number): boolean {
    if (this.used + bytes > this.limit) return false;
    this.used += bytes;
    return true;
  }

  release(bytes: number): void {
    this.used -= bytes;
  }
}

function overBudget(): ThreatcolError {
  return new ThreatcolError('UNAVAILABLE', 'the collector is overloaded; retry shortly', {
    headers: { 'Retry-After': '1', Connection: 'close' },
  });
}

/**
 * Reads the whole body. The bytes it holds are reserved from `budget` and handed back by `release()`
 * once the caller is done with the body (or at once when reading fails).
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  gzip: boolean,
  budget: BodyBudget,
): Promise<{ body: Buffer; release: () => void }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let reserved = 0;
    let settled = false;
    const release = () => {
      budget.release(reserved);
      reserved = 0;
    };
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      req.off('aborted', onAborted);
      if (error) {
        release();
        reject(error);
      } else {
        resolve({ body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size), release });
      }
    };
    const onAborted = () => settle(new ClientGone('client closed the connection'));
    req.on('aborted', onAborted);
    req.on('error', () => settle(new ClientGone('request stream error')));

    const source: NodeJS.ReadableStream = gzip ? req.pipe(createGunzip()) : req;
    const onData = (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      const failure = size > limit ? tooLarge(limit) : budget.reserve(chunk.length) ? null : overBudget();
      if (failure) {
        if (gzip) (source as ReturnType<typeof createGunzip>).destroy();
        req.pause();
        settle(failure);
        return;
      }
      reserved += chunk.length;
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
