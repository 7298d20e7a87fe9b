// What `threatcol send syslog` does: sends sample threat messages of a format, octet-counted, over TLS (with a
// client certificate when the sensor pins one) or plain TCP, and prints what it sent. Syslog has no answer: a
// connection the collector closes unread (it matches no sensor) fails the command; whether the messages were
// stored shows in `threats tail --endpoint syslog` and `sensor show NAME --syslog-errors`.

import { isIP, type Socket } from 'node:net';
import { connectionError } from '../client/connection-error.js';
import {
  SYSLOG_SAMPLE_FORMATS,
  type SyslogSampleFormat,
  sampleSyslogMessage,
} from '../client/syslog-samples.js';
import { type SyslogDestination, SyslogRefusedError, sendSyslog } from '../client/syslog-send.js';
import { parseAdminListen } from '../config/admin-address.js';
import { loadConfig } from '../config/load-config.js';
import { ThreatcolError } from '../errors.js';
import { type CliIo, write, writeJson } from './io.js';
import { HTTPS_ONLY_FLAGS, refuseFlags } from './send-flags.js';
import { chooseTrust, readArgumentFile, type TargetOptions } from './send-target.js';

export interface SendSyslogOptions extends TargetOptions {
  format?: string;
  sample?: boolean;
  data?: string;
  tcp?: boolean;
  relp?: boolean;
  clientCert?: string;
  clientKey?: string;
  source?: string;
  count?: string;
  concurrency?: string;
  json?: boolean;
}

export async function sendSyslogAction(options: SendSyslogOptions, io: CliIo): Promise<number> {
  // A key or a batch would mean nothing to a syslog listener: said, not ignored.
  refuseFlags(options, HTTPS_ONLY_FLAGS, 'send firewall|generic', 'send syslog');
  if (options.sensor === undefined && !SYSLOG_SAMPLE_FORMATS.includes(options.format as SyslogSampleFormat)) {
    throw usage(
      `send syslog needs --format ${SYSLOG_SAMPLE_FORMATS.join('|')} (or --sensor NAME: its format)`,
    );
  }
  if (options.source !== undefined && isIP(options.source) === 0)
    throw usage(`--source is a local IP address to send from, not "${options.source}"`);
  if (options.sensor !== undefined && options.relp)
    throw usage('--sensor tests a TLS or TCP connection; RELP answers each message (drop --sensor)');
  if (options.sample !== true || options.data !== undefined)
    throw usage('send syslog sends --sample messages only');
  if ((options.clientCert === undefined) !== (options.clientKey === undefined)) {
    throw usage('give --client-cert and --client-key together');
  }
  if (
    options.tcp &&
    (options.clientCert !== undefined ||
      options.ca !== undefined ||
      options.fingerprint !== undefined ||
      options.insecure)
  ) {
    throw usage('--tcp is plain TCP: --client-cert, --ca, --fingerprint and --insecure are for TLS');
  }
  if (options.tcp && options.relp) throw usage('--tcp and --relp exclude each other: RELP runs over TLS');
  const count = integer(options.count ?? '1', '--count', 1, 100_000_000);
  const concurrency = integer(options.concurrency ?? '1', '--concurrency', 1, 1000);
  const to = destination(options, io);
  const plan =
    options.sensor === undefined
      ? null
      : await (await import('./send-syslog-sensor.js')).syslogSensorPlan(
          options.sensor,
          options,
          to.tls?.cert ?? null,
          io,
        );
  const format = plan?.format ?? (options.format as SyslogSampleFormat);
  const scheme = options.relp ? 'relp' : to.tls ? 'tls' : 'tcp';
  const where = `${scheme}://${to.host.includes(':') ? `[${to.host}]` : to.host}:${to.port}`;
  const base = Date.now();
  // Each message a second apart in its own time field: distinct records, never taken for retries.
  const next = (i: number) => sampleSyslogMessage(format, base - (count - i) * 1000);
  if (options.relp)
    return sendRelpAction(to, where, { format, count, concurrency, json: options.json }, next, io);
  let summary: Awaited<ReturnType<typeof sendSyslog>>;
  let from = '';
  const connected = (socket: Socket) => {
    from = socket.localAddress ?? '';
    plan?.check(socket);
  };
  try {
    summary = await sendSyslog(to, count, concurrency, next, connected);
  } catch (error) {
    if (error instanceof ThreatcolError) throw error;
    if (error instanceof SyslogRefusedError) {
      const certificate =
        to.tls?.cert === undefined ? 'without a client certificate' : 'with the client certificate given';
      throw new ThreatcolError(
        'SYSLOG_REFUSED',
        `${where}: ${error.message}: no active sensor matches this connection (from ${from.replace(/^::ffff:(?=\d+\.)/, '')}, ${certificate}); see sensor list and sensor show NAME, or the collector's log ("matches no active sensor")`,
      );
    }
    throw connectionError(error, where, to.tls?.trust);
  }
  const as = options.sensor === undefined ? '' : ` as sensor ${options.sensor}`;
  if (options.json) {
    writeJson(io.stdout, {
      to: where,
      format,
      ...(options.sensor ? { sensor: options.sensor } : {}),
      ...summary,
    });
  } else {
    write(
      io.stdout,
      `sent ${summary.messages} ${format} messages (${summary.bytes} bytes) to ${where}${as} over ${summary.connections} connection${summary.connections === 1 ? '' : 's'} in ${summary.seconds.toFixed(3)} s`,
    );
    write(
      io.stderr,
      'syslog has no acknowledgement: see threatcol threats tail --endpoint syslog, or sensor show NAME --syslog-errors',
    );
  }
  return 0;
}

/** `send syslog --relp`: every message answered; exits UNAVAILABLE unless each was answered 200 OK. */
async function sendRelpAction(
  to: SyslogDestination,
  where: string,
  run: { format: string; count: number; concurrency: number; json?: boolean },
  next: (i: number) => string,
  io: CliIo,
): Promise<number> {
  const { sendRelp } = await import('../client/relp-send.js');
  let summary: Awaited<ReturnType<typeof sendRelp>>;
  try {
    summary = await sendRelp(to, run.count, run.concurrency, next);
  } catch (error) {
    throw connectionError(error, where, to.tls?.trust);
  }
  if (run.json) writeJson(io.stdout, { to: where, format: run.format, ...summary });
  else {
    write(
      io.stdout,
      `sent ${summary.messages} ${run.format} messages (${summary.bytes} bytes) to ${where} over ${summary.connections} RELP session${summary.connections === 1 ? '' : 's'} in ${summary.seconds.toFixed(3)} s: ${summary.acknowledged} answered 200 OK (stored)`,
    );
  }
  if (summary.refused > 0) {
    throw new ThreatcolError(
      'UNAVAILABLE',
      `${summary.refused} of ${summary.messages} messages were not answered 200 OK: send them again`,
    );
  }
  return 0;
}

/** --url host:port, else this machine and the port of syslog.listen (with --tcp, syslog.tcpListen; --relp, syslog.relpListen). */
function destination(options: SendSyslogOptions, io: CliIo): SyslogDestination {
  let host = 'localhost';
  let port: number;
  if (options.url !== undefined) {
    const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(options.url);
    if (m === null || Number(m[2]) > 65535)
      throw usage(`send syslog --url is HOST:PORT, not "${options.url}"`);
    host = m[1] as string;
    port = Number(m[2]);
  } else {
    const { config } = loadConfig({ configPath: options.config, env: io.env });
    const key = options.tcp ? 'tcpListen' : options.relp ? 'relpListen' : 'listen';
    const at = parseAdminListen(config.syslog[key]);
    if (at === null || at.port === 0)
      throw usage(`no --url and syslog.${key} gives no port: --url HOST:PORT`);
    port = at.port;
  }
  const local = options.source === undefined ? {} : { localAddress: options.source };
  if (options.tcp) return { host, port, tls: null, ...local };
  const trust = chooseTrust(options, new URL(`tls://${host.includes(':') ? `[${host}]` : host}`), io);
  if (trust.kind === 'insecure')
    write(io.stderr, "threatcol: warning: --insecure: the collector's certificate is not verified");
  return {
    host,
    port,
    ...local,
    tls: {
      trust,
      ...(options.clientCert !== undefined && options.clientKey !== undefined
        ? {
            cert: readArgumentFile(options.clientCert, '--client-cert'),
            key: readArgumentFile(options.clientKey, '--client-key'),
          }
        : {}),
    },
  };
}

function integer(text: string, flag: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || n < min || n > max)
    throw usage(`${flag} must be an integer from ${min} to ${max}`);
  return n;
}

function usage(message: string): ThreatcolError {
  return new ThreatcolError('USAGE', message);
}
