// Compiles the record schemas once and validates a body (one record or an array) with bounded, readable details.
import { isIP } from 'node:net';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { ErrorDetail } from '../errors.js';
import { MAX_EXTRA_FIELDS, MAX_FIELD_NAME } from './common.js';
import { compileCheck } from './compile-check.js';
import { firewallRecordSchema } from './firewall-record.js';
import { isFirewallTime } from './firewall-time-format.js';
import { genericRecordSchema } from './generic-record.js';

export const MAX_DETAILS = 20;

/** The detailed validators: every error, with its schema, to describe each; run only once a body has failed. */
const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
const formats = { ip: isIpAddress, 'firewall-time': isFirewallTime };
for (const [name, validate] of Object.entries(formats)) ajv.addFormat(name, { type: 'string', validate });

export const validators = {
  firewall: ajv.compile<unknown>(firewallRecordSchema),
  generic: ajv.compile<unknown>(genericRecordSchema),
} as const;

/** The happy path: the same schemas as plain checkers (compile-check.ts), yes or no, no error objects. */
export const fastChecks = {
  firewall: compileCheck(firewallRecordSchema, formats),
  generic: compileCheck(genericRecordSchema, formats),
} as const;

/**
 * isIP(s) !== 0, with the common shapes read by hand instead of by node's regexes (the IPv6 one was 3% of a
 * batched profile): dotted-quad IPv4, and IPv6 of hex groups with at most one `::`. Anything else (an IPv4
 * tail, a zone id, or not an address) goes to isIP, behind a one-entry memo.
 */
export function isIpAddress(s: string): boolean {
  const v4 = dottedQuad(s);
  if (v4 !== -1) return v4 === 1;
  if (hexGroups(s)) return true;
  if (s !== lastOther) {
    lastOther = s;
    lastOtherValid = isIP(s) !== 0;
  }
  return lastOtherValid;
}

let lastOther = '';
let lastOtherValid = false;

/** True only for IPv6 written as 1-4 hex digit groups with at most one `::` (8 groups, or at most 7 with it). */
export function hexGroups(s: string): boolean {
  const n = s.length;
  if (n < 2 || n > 39) return false;
  let groups = 0;
  let digits = 0;
  let compressed = false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x3a) {
      if (digits > 0) {
        groups++;
        digits = 0;
      } else if (i > 0) {
        return false; // an empty group: ":::" or a third colon
      }
      if (i + 1 < n && s.charCodeAt(i + 1) === 0x3a) {
        if (compressed) return false;
        compressed = true;
        i++;
      } else if (i === 0 || i === n - 1) {
        return false; // a single colon may neither begin nor end the address
      }
    } else if ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46)) {
      if (++digits > 4) return false;
    } else {
      return false;
    }
  }
  if (digits > 0) groups++;
  return compressed ? groups <= 7 : groups === 8;
}

/** 1: a dotted quad (0-255, no leading zeros); -1: not one, ask isIP. */
function dottedQuad(s: string): number {
  const n = s.length;
  if (n < 7 || n > 15) return -1;
  let i = 0;
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (s.charCodeAt(i) !== 0x2e) return -1;
      i++;
    }
    const start = i;
    let value = 0;
    while (i < n && i - start < 4) {
      const c = s.charCodeAt(i) - 48;
      if (c < 0 || c > 9) break;
      value = value * 10 + c;
      i++;
    }
    const digits = i - start;
    if (digits === 0 || digits > 3 || value > 255 || (digits > 1 && s.charCodeAt(start) === 0x30)) return -1;
  }
  return i === n ? 1 : -1;
}

export type Endpoint = keyof typeof validators;

export type BodyCheck =
  | { ok: true; records: Record<string, unknown>[] }
  | { ok: false; details: ErrorDetail[] };

/** Accepts one record or an array of 1..maxRecords records; all-or-nothing. */
export function validateBody(endpoint: Endpoint, body: unknown, maxRecords: number): BodyCheck {
  const fast = fastChecks[endpoint];
  const validate = validators[endpoint];
  if (Array.isArray(body)) {
    if (body.length === 0 || body.length > maxRecords) {
      return { ok: false, details: [{ path: '', message: `an array must hold 1 to ${maxRecords} records` }] };
    }
    let valid = true;
    for (let i = 0; i < body.length && valid; i++) valid = fast(body[i]);
    if (valid) return { ok: true, records: body };
    const details: ErrorDetail[] = [];
    for (let i = 0; i < body.length && details.length < MAX_DETAILS; i++) {
      if (!validate(body[i])) collectDetails(validate, `/${i}`, details);
    }
    return details.length === 0 ? { ok: true, records: body } : { ok: false, details };
  }
  // ajv has the last word, here as for arrays: were the checker ever stricter, the record still passes.
  if (fast(body) || validate(body)) return { ok: true, records: [body as Record<string, unknown>] };
  const details: ErrorDetail[] = [];
  collectDetails(validate, '', details);
  return { ok: false, details };
}

function collectDetails(validate: ValidateFunction, prefix: string, into: ErrorDetail[]): void {
  const seen = new Set<string>();
  for (const error of validate.errors ?? []) {
    if (into.length >= MAX_DETAILS) return;
    const detail = describe(error, prefix);
    // type: ['integer','string'] fields report several keywords for one bad value; keep the first.
    if (seen.has(detail.path)) continue;
    seen.add(detail.path);
    into.push(detail);
  }
}

function describe(error: ErrorObject, prefix: string): ErrorDetail {
  const path = prefix + error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: `${path}/${String(params.missingProperty)}`, message: 'is required' };
    case 'type':
      if (error.instancePath === '') return { path, message: 'must be a JSON object (or an array of them)' };
      return { path, message: describeType(error) };
    case 'format':
      return {
        path,
        message:
          params.format === 'ip'
            ? 'must be an IPv4 or IPv6 address'
            : 'must be a real time as YYYY/MM/DD HH:MM:SS',
      };
    case 'pattern':
    case 'minimum':
    case 'maximum':
      return { path, message: describeRange(error) };
    case 'minLength':
      return { path, message: 'must not be empty' };
    case 'propertyNames':
      return { path, message: `has a field name longer than ${MAX_FIELD_NAME} characters` };
    case 'maxLength':
      // ajv reports a bad field name as maxLength on the object, with the name in `propertyName`.
      if ((error as { propertyName?: string }).propertyName !== undefined)
        return { path, message: `has a field name longer than ${MAX_FIELD_NAME} characters` };
      return { path, message: `must be at most ${String(params.limit)} characters` };
    case 'maxProperties':
      // The documentation's words: the record's own fields plus at most MAX_EXTRA_FIELDS extra ones.
      return {
        path,
        message: `has more than ${String(params.limit)} fields: at most ${MAX_EXTRA_FIELDS} extra fields beside the record's own ${Number(params.limit) - MAX_EXTRA_FIELDS}`,
      };
    default:
      return { path, message: error.message ?? 'is invalid' };
  }
}

function describeType(error: ErrorObject): string {
  const expected = String((error.params as { type: unknown }).type);
  if (expected === 'integer,string') return describeRange(error);
  if (expected === 'string,number,boolean,null')
    return 'extra fields must be strings, numbers, booleans or null';
  return `must be a ${expected}`;
}

function describeRange(error: ErrorObject): string {
  const schema = error.parentSchema as { maximum?: number } | undefined;
  return schema?.maximum === 4 ? 'must be an integer 0-4' : 'must be an integer 0-65535';
}
