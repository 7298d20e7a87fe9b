// One identified syslog connection: frames, reads and stores its messages, never reading further than it can store.
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import { newRecordId } from '../../records/record-id.js';
import { isAsciiText } from '../../records/stored-line.js';
import { type BuiltRecord, buildSyslogRecord, type ReceiptContext } from '../../records/stored-record.js';
import type { Sensor } from '../../store/registry.js';
import type { RecordLog, SensorStatsStore } from '../../store/store.js';
import { SyslogFramer } from './framer.js';
import { otherFields } from './other-fields.js';
import { FORMAT_PARSERS, type SyslogFormat } from './parsers/format-parsers.js';
import { parseSyslogHeader } from './syslog-header.js';
import type { SyslogTally } from './syslog-tally.js';

export interface ConnectionDeps {
  config: Config;
  recordLog: RecordLog;
  /** Last seen, last address and records received, as for HTTPS senders (counted once durable). */
  stats: SensorStatsStore;
  logger: Logger;
  now: () => number;
  /** Counters per sensor and format, and the sample of unreadable messages. */
  tally: SyslogTally;
}

/** How long a failed append waits before it is tried again (the connection stays paused meanwhile). */
const RETRY_MS = 1000;

/**
 * Serves `socket` for `sensor` until it closes. Every chunk's threats are appended in one call (the record log
 * groups concurrent calls into one fsync). While more than syslog.maxUnsyncedMessages of this connection's
 * messages are not yet durable the socket is paused, so TCP pushes back on the sender; an append the store
 * refuses is retried with the socket paused, never dropped.
 */
export function serveSyslogConnection(
  socket: Socket,
  sensor: Sensor,
  remoteAddr: string,
  deps: ConnectionDeps,
): void {
  const { config, logger, tally } = deps;
  const counts = tally.totals;
  const format = (sensor.syslog?.format ?? '') as SyslogFormat;
  const parse = FORMAT_PARSERS[format];
  const framer = new SyslogFramer({
    maxMessageBytes: config.syslog.maxMessageBytes,
    oversize: config.syslog.oversize,
  });
  const timezone = sensor.timezone ?? config.firewall.defaultTimezone;
  let unsynced = 0;
  let closed = false;
  let reportedOversize = 0;

  const append = (records: BuiltRecord[]): void => {
    unsynced += records.length;
    if (unsynced >= config.syslog.maxUnsyncedMessages) socket.pause();
    const attempt = (): void => {
      deps.recordLog.append(records).then(
        () => {
          deps.stats.recordAccepted(
            sensor.name,
            remoteAddr,
            records.length,
            new Date(deps.now()).toISOString(),
          );
          tally.count(sensor.name, format, 'stored', records.length);
          unsynced -= records.length;
          if (!closed && unsynced < config.syslog.maxUnsyncedMessages && socket.isPaused()) socket.resume();
        },
        (error: Error) => {
          socket.pause();
          logger.error({ sensor: sensor.name, err: error.message }, 'cannot store syslog messages; retrying');
          setTimeout(attempt, RETRY_MS).unref();
        },
      );
    };
    attempt();
  };

  const take = (frames: ReturnType<SyslogFramer['push']>): void => {
    // Dropped oversize messages give no frame but are counted all the same.
    const oversize = framer.counts.oversize - reportedOversize;
    if (oversize > 0) {
      counts.oversize += oversize;
      tally.count(sensor.name, format, 'truncated', oversize);
      // A dropped message gives no frame: it was received all the same.
      if (config.syslog.oversize === 'drop') tally.count(sensor.name, format, 'received', oversize);
    }
    reportedOversize = framer.counts.oversize;
    if (parse === undefined || frames.length === 0) return;
    const nowMs = deps.now();
    const records: BuiltRecord[] = [];
    let ctx: ReceiptContext | undefined;
    for (const frame of frames) {
      const text = frame.message.toString('utf8');
      const header = parseSyslogHeader(text, { timezone, nowMs });
      const result = header.ok
        ? parse(header.message, { timezone, defaultCriticality: config.firewall.defaultCriticality })
        : { kind: 'invalid' as const, reason: header.reason };
      tally.count(sensor.name, format, 'received');
      if (result.kind === 'other') {
        counts.other++;
        tally.count(sensor.name, format, 'other');
        if (config.syslog.keepOther && header.ok) {
          ctx ??= receipt(sensor.name, remoteAddr, timezone, nowMs, deps.config);
          const r = buildSyslogRecord(
            otherFields(header.message, result.what),
            format,
            text,
            frame.truncated,
            {
              ...ctx,
              ascii: isAsciiText(text),
            },
          );
          r.other = true;
          records.push(r);
        }
      } else if (result.kind === 'invalid') {
        counts.invalid++;
        tally.count(sensor.name, format, 'invalid');
        tally.sample(
          sensor.name,
          { at: new Date(nowMs).toISOString(), remoteAddr, format, reason: result.reason },
          frame.message,
        );
        logger.debug({ sensor: sensor.name, format, reason: result.reason }, 'syslog message not read');
      } else {
        counts.threats++;
        ctx ??= receipt(sensor.name, remoteAddr, timezone, nowMs, deps.config);
        const ascii = isAsciiText(text);
        records.push(buildSyslogRecord(result.fields, format, text, frame.truncated, { ...ctx, ascii }));
      }
    }
    if (records.length > 0) append(records);
  };

  socket.on('data', (chunk: Buffer) => take(framer.push(chunk)));
  socket.on('end', () => {
    take(framer.end());
    socket.end();
  });
  socket.on('close', () => {
    closed = true;
  });
  socket.on('error', (error: NodeJS.ErrnoException) => {
    logger.debug(
      { sensor: sensor.name, remoteAddr, err: error.code ?? error.message },
      'syslog connection error',
    );
  });
}

function receipt(
  sensor: string,
  remoteAddr: string,
  timezone: string,
  nowMs: number,
  config: Config,
): ReceiptContext {
  return {
    id: () => newRecordId(nowMs),
    receivedAt: new Date(nowMs).toISOString(),
    sensor,
    remoteAddr,
    timezone,
    repaired: false,
    rules: config.firewall,
    ascii: false,
    plainStrings: false,
  };
}
