// Compiles the record schemas once and validates a body (one record or an array) with bounded, readable details.
import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { ErrorDetail } from '../errors.js';
import { MAX_EXTRA_FIELDS, MAX_FIELD_NAME } from './common.js';
import { compileCheck } from './compile-check.js';
import { firewallRecordSchema } from './firewall-record.js';
import { isFirewallTime } from './firewall-time-format.js';
import { genericRecordSchema } from './generic-record.js';
import { isIpAddress } from './ip-address.js';

export const MAX_DETAILS = 20;

const formats = { ip: isIpAddress, 'firewall-time': isFirewallTime };

/** The happy path: the same schemas as plain checkers (compile-check.ts), yes or no, no error objects. */
export const fastChecks = {
  firewall: compileCheck(firewallRecordSchema, formats),
  generic: compileCheck(genericRecordSchema, formats),
} as const;

export type Endpoint = keyof typeof fastChecks;

// The detailed validators (every error, with its schema, to describe each) run only once a body has failed the
// checkers, so ajv is loaded and compiles them then, not at start-up: ~200 ms of CPU every serve start paid for
// nothing while its records were good. CommonJS, so require() is synchronous.
const requireHere = createRequire(import.meta.url);
let compiled: Record<Endpoint, ValidateFunction> | undefined;

function detailed(endpoint: Endpoint): ValidateFunction {
  if (compiled === undefined) {
    const { Ajv } = requireHere('ajv') as typeof import('ajv');
    const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
    for (const [name, validate] of Object.entries(formats)) ajv.addFormat(name, { type: 'string', validate });
    compiled = { firewall: ajv.compile(firewallRecordSchema), generic: ajv.compile(genericRecordSchema) };
  }
  return compiled[endpoint];
}

/** The detailed validators, yes or no (their errors are the business of validateBody). */
export const validators: Record<Endpoint, (record: unknown) => boolean> = {
  firewall: (record) => detailed('firewall')(record) as boolean,
  generic: (record) => detailed('generic')(record) as boolean,
};

export type BodyCheck =
  | { ok: true; records: Record<string, unknown>[] }
  | { ok: false; details: ErrorDetail[] };

/** Accepts one record or an array of 1..maxRecords records; all-or-nothing. */
export function validateBody(endpoint: Endpoint, body: unknown, maxRecords: number): BodyCheck {
  const fast = fastChecks[endpoint];
  if (Array.isArray(body)) {
    if (body.length === 0 || body.length > maxRecords) {
      return { ok: false, details: [{ path: '', message: `an array must hold 1 to ${maxRecords} records` }] };
    }
    let valid = true;
    for (let i = 0; i < body.length && valid; i++) valid = fast(body[i]);
    if (valid) return { ok: true, records: body };
    const validate = detailed(endpoint);
    const details: ErrorDetail[] = [];
    for (let i = 0; i < body.length && details.length < MAX_DETAILS; i++) {
      if (!validate(body[i])) collectDetails(validate, `/${i}`, details);
    }
    return details.length === 0 ? { ok: true, records: body } : { ok: false, details };
  }
  // ajv has the last word, here as for arrays: were the checker ever stricter, the record still passes.
  if (fast(body)) return { ok: true, records: [body as Record<string, unknown>] };
  const validate = detailed(endpoint);
  if (validate(body)) return { ok: true, records: [body as Record<string, unknown>] };
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
