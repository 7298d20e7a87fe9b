// What every syslog transport (TCP, TLS, RELP) does alike with one sender's messages: read, count, store durably.
import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import { newRecordId } from '../../records/record-id.js';
import { isAsciiText } from '../../records/stored-line.js';
import { type BuiltRecord, buildSyslogRecord, type ReceiptContext } from '../../records/stored-record.js';
import type { Sensor } from '../../store/registry.js';
import type { RecordLog, SensorStatsStore } from '../../store/store.js';
import { otherFields } from './other-fields.js';
import { parserOf, type SyslogFormat } from './parsers/format-parsers.js';
import { parseSyslogHeader } from './syslog-header.js';
import type { SyslogTally } from './syslog-tally.js';

export interface IntakeDeps {
  config: Config;
  recordLog: RecordLog;
  /** Last seen, last address and records received, as for HTTPS senders (counted once durable). */
  stats: SensorStatsStore;
  logger: Logger;
  now: () => number;
  /** Counters per sensor and format, and the sample of unreadable messages. */
  tally: SyslogTally;
}

export interface SyslogIntake {
  /**
   * The record bytes `start` to `end` of `bytes` (a message) become, or null (not a threat, unreadable, or no
   * parser): counted either way. The bytes are read during the call only (the framer's chunk; framer.ts).
   */
  read(bytes: Buffer, start: number, end: number, truncated: boolean, nowMs: number): BuiltRecord | null;
  /** Messages over syslog.maxMessageBytes (`dropped`: no frame was given for them). */
  countOversize(n: number, dropped: boolean): void;
  /** Counts `n` messages the connection ended inside of (lost: never complete, never stored). */
  countIncomplete(n: number): void;
  /** Appends `records` (group commit); resolves once durable, having counted them stored. */
  store(records: BuiltRecord[]): Promise<void>;
  /** The sensor the connection's messages are read and stored for now. */
  readonly sensor: Sensor;
  /**
   * The registry now gives the connection another sensor (a narrower network was added): messages read from now
   * on are read with its format and time zone and stored under its name; those read before keep the old one.
   */
  reassign(sensor: Sensor): void;
}

export function createSyslogIntake(first: Sensor, remoteAddr: string, deps: IntakeDeps): SyslogIntake {
  const { config, logger, tally } = deps;
  const counts = tally.totals;
  let sensor = first;
  let format = formatOf(sensor);
  let parse = parserOf(format);
  let timezone = sensor.timezone ?? config.firewall.defaultTimezone;
  let ascii: ReceiptContext | undefined;
  let other: ReceiptContext | undefined;
  let ctxMs = Number.NaN;
  // One receipt per read time and kind of text: the messages of one chunk share it, as an HTTPS batch does
  // (an object per message, made by spreading it, was garbage the collector paid for).
  const receiptAt = (nowMs: number, isAscii: boolean): ReceiptContext => {
    if (ctxMs !== nowMs) {
      ascii = undefined;
      other = undefined;
      ctxMs = nowMs;
    }
    if (isAscii) {
      ascii ??= receipt(sensor.name, remoteAddr, timezone, nowMs, config, true);
      return ascii;
    }
    other ??= receipt(sensor.name, remoteAddr, timezone, nowMs, config, false);
    return other;
  };

  return {
    read(bytes, start, end, truncated, nowMs) {
      // None: the registry's shape check (store/sensor-syslog.ts) lets no other format through.
      if (parse === undefined) return null;
      const text = bytes.toString('utf8', start, end);
      const header = parseSyslogHeader(text, { timezone, nowMs });
      const result = header.ok
        ? parse(header.message, { timezone, defaultCriticality: config.firewall.defaultCriticality })
        : { kind: 'invalid' as const, reason: header.reason };
      tally.count(sensor.name, format, 'received');
      if (result.kind === 'other') {
        counts.other++;
        tally.count(sensor.name, format, 'other');
        if (!config.syslog.keepOther || !header.ok) return null;
        // syslog.keepOther: stored as a record of the same shape, flagged (other-fields.ts).
        const fields = otherFields(header.message, result.what);
        const r = buildSyslogRecord(fields, format, text, truncated, receiptAt(nowMs, isAsciiText(text)));
        r.other = true;
        return r;
      }
      if (result.kind === 'invalid') {
        counts.invalid++;
        tally.count(sensor.name, format, 'invalid');
        tally.sample(
          sensor.name,
          { at: new Date(nowMs).toISOString(), remoteAddr, format, reason: result.reason },
          bytes.subarray(start, end),
        );
        logger.debug({ sensor: sensor.name, format, reason: result.reason }, 'syslog message not read');
        return null;
      }
      counts.threats++;
      return buildSyslogRecord(result.fields, format, text, truncated, receiptAt(nowMs, isAsciiText(text)));
    },
    countOversize(n, dropped) {
      counts.oversize += n;
      tally.count(sensor.name, format, 'truncated', n);
      // A dropped message gives no frame: it was received all the same.
      if (dropped) tally.count(sensor.name, format, 'received', n);
    },
    countIncomplete(n) {
      tally.count(sensor.name, format, 'incomplete', n);
    },
    async store(records) {
      // Counted for the sensor they were read for, even if the connection is reassigned meanwhile.
      const name = sensor.name;
      const as = format;
      await deps.recordLog.append(records);
      deps.stats.recordAccepted(name, remoteAddr, records.length, new Date(deps.now()).toISOString());
      tally.count(name, as, 'stored', records.length);
    },
    get sensor() {
      return sensor;
    },
    reassign(next) {
      sensor = next;
      format = formatOf(next);
      parse = parserOf(format);
      timezone = next.timezone ?? config.firewall.defaultTimezone;
      ctxMs = Number.NaN;
    },
  };
}

const formatOf = (sensor: Sensor): SyslogFormat => (sensor.syslog?.format ?? '') as SyslogFormat;

function receipt(
  sensor: string,
  remoteAddr: string,
  timezone: string,
  nowMs: number,
  config: Config,
  ascii: boolean,
): ReceiptContext {
  return {
    id: () => newRecordId(nowMs),
    receivedAt: new Date(nowMs).toISOString(),
    sensor,
    remoteAddr,
    timezone,
    repaired: false,
    rules: config.firewall,
    ascii,
    plainStrings: false,
  };
}
