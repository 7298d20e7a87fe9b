// An undici client that talks real TLS to the collector, trusting its self-signed certificate only.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Agent, request } from 'undici';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

/** An agent that verifies the collector's certificate against the self-signed one in its data directory. */
export function trustingAgent(
  dataDir: string,
  options: { connections?: number; pipelining?: number; answerWithinMs?: number } = {},
): Agent {
  const ca = readFileSync(join(dataDir, 'tls', 'cert.pem'), 'utf8');
  return new Agent({
    connect: { ca, servername: 'localhost' },
    connections: options.connections ?? null,
    pipelining: options.pipelining ?? 1,
    // A request the collector never answers fails with a timeout error instead of holding the test.
    ...(options.answerWithinMs === undefined
      ? {}
      : { headersTimeout: options.answerWithinMs, bodyTimeout: options.answerWithinMs }),
  });
}

export interface PostOptions {
  sensor?: string | undefined;
  key?: string | undefined;
  headers?: Record<string, string>;
  contentType?: string | null;
  method?: string;
  gzip?: boolean;
  agent: Agent;
}

export async function post(url: string, path: string, body: unknown, options: PostOptions): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (options.contentType !== null) headers['content-type'] = options.contentType ?? 'application/json';
  if (options.key !== undefined) headers['x-auth_key'] = options.key;
  if (options.sensor !== undefined) headers['x-sensor_name'] = options.sensor;
  Object.assign(headers, options.headers);
  let payload: string | Buffer | undefined =
    body === undefined
      ? undefined
      : typeof body === 'string' || Buffer.isBuffer(body)
        ? body
        : JSON.stringify(body);
  if (options.gzip && payload !== undefined) {
    payload = gzipSync(payload);
    headers['content-encoding'] = 'gzip';
  }
  const res = await request(`${url}${path}`, {
    method: (options.method ?? 'POST') as 'POST',
    headers,
    body: payload,
    dispatcher: options.agent,
  });
  const text = await res.body.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.statusCode, headers: res.headers, text, json };
}

export function errorCode(reply: Reply): string | undefined {
  return (reply.json as { error?: { code?: string } } | null)?.error?.code;
}

/**
 * A sensor's POST of one record, each try on a fresh connection (as a sender that was turned away opens), until
 * one is answered 200 or `tries` are spent: each try's status, or its connection error's code.
 */
export async function freshConnectionTries(
  server: { url: string; dataDir: string },
  sensor: string,
  key: string,
  body: unknown,
  tries: number,
): Promise<(number | string)[]> {
  const statuses: (number | string)[] = [];
  for (let i = 0; i < tries && !statuses.includes(200); i++) {
    const agent = trustingAgent(server.dataDir, { answerWithinMs: 15_000 });
    try {
      statuses.push((await post(server.url, '/generic', body, { sensor, key, agent })).status);
    } catch (error) {
      statuses.push((error as { code?: string }).code ?? String(error));
    } finally {
      await agent.close().catch(() => {});
    }
  }
  return statuses;
}
