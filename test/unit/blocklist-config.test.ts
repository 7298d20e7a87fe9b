// The `blocklist` section: defaults, rule defaults, and every malformed value refused naming its key.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { maskBytes, parseBlockDuration, parseNetwork } from '../../src/config/blocklist-schema.js';
import { loadConfig } from '../../src/config/load-config.js';
import { ThreatcolError } from '../../src/errors.js';
import { makeTempDir } from '../helpers/temp-dir.js';

function load(t: { after(fn: () => void): void }, blocklist: unknown) {
  const path = join(makeTempDir(t), 'config.json');
  writeFileSync(path, JSON.stringify({ blocklist }));
  return loadConfig({ env: {}, configPath: path });
}

function problems(t: { after(fn: () => void): void }, blocklist: unknown): string[] {
  try {
    load(t, blocklist);
  } catch (error) {
    assert.ok(error instanceof ThreatcolError);
    assert.equal(error.code, 'CONFIG_INVALID');
    assert.equal(error.exitCode, 78);
    return (error.details ?? []).map((d) => `${d.path}: ${d.message}`);
  }
  assert.fail('expected CONFIG_INVALID');
}

test("blocklist: the defaults, and a rule takes its keys' defaults", (t) => {
  const { config } = load(t, { rules: { critical: { minCriticality: 4, duration: '24h' } } });
  assert.deepEqual(config.blocklist.rules.critical, {
    minCriticality: 4,
    minRecords: 1,
    minSensors: 1,
    within: '1h',
    duration: '24h',
    sensors: null,
    endpoints: null,
    threat: null,
    address: 'source',
  });
  assert.equal(config.blocklist.repeatFactor, 2);
  assert.equal(config.blocklist.maxDuration, '30d');
  assert.equal(config.blocklist.ipv6Prefix, 64);
  assert.equal(config.blocklist.maxTracked, 1_000_000);
  assert.equal(config.blocklist.blockPrivate, false);
});

test('blocklist: a malformed CIDR, duration or rule key is refused, naming the key', (t) => {
  const found = problems(t, {
    rules: { spreading: { minCriticality: 2, minSensor: 2, duration: '6h' }, bad: { duration: '6 hours' } },
    allow: ['203.0.113.0/24', '203.0.113.0/33'],
    maxDuration: '0d',
  });
  assert.ok(
    found.some(
      (p) => p.startsWith('blocklist.rules.spreading.minSensor: unknown key') && p.includes('minSensors'),
    ),
    found.join('\n'),
  );
  assert.ok(
    found.some((p) => p.startsWith('blocklist.rules.bad.duration')),
    found.join('\n'),
  );
  const values = problems(t, {
    allow: ['203.0.113.0/33'],
    maxDuration: '0d',
    rules: { r: { duration: '1h' } },
  });
  assert.ok(
    values.some((p) => p.startsWith('blocklist.allow[0]: "203.0.113.0/33"')),
    values.join('\n'),
  );
  assert.ok(
    values.some((p) => p.startsWith('blocklist.maxDuration')),
    values.join('\n'),
  );
  assert.ok(
    problems(t, { rules: { r: { minCriticality: 4 } } }).some((p) => p.startsWith('blocklist.rules.r')),
  );
  assert.ok(
    problems(t, { rules: { 'a/b': { duration: '1h' } } }).some((p) => p.startsWith('blocklist.rules.a/b')),
  );
  // More distinct sensors than the rule listed: it could never block.
  const unreachable = problems(t, { rules: { r: { duration: '1h', sensors: ['fw1'], minSensors: 2 } } });
  assert.ok(
    unreachable.some((p) => p.startsWith('blocklist.rules.r.minSensors') && p.includes('sensors')),
    unreachable.join('\n'),
  );
  // An empty list would match no record: the rule would never block, and check would not say so.
  for (const key of ['sensors', 'endpoints']) {
    const found = problems(t, { rules: { r: { duration: '1h', [key]: [] } } });
    assert.ok(
      found.some((p) => p.startsWith(`blocklist.rules.r.${key}`)),
      `${key}: []: ${found.join('\n')}`,
    );
  }
});

test('parseBlockDuration: units, sums, and what is refused', () => {
  assert.equal(parseBlockDuration('24h'), 86_400_000);
  assert.equal(parseBlockDuration('1h30m'), 5_400_000);
  assert.equal(parseBlockDuration('2w'), 14 * 86_400_000);
  assert.equal(parseBlockDuration('500ms'), 500);
  for (const bad of ['', '0s', '24', 'h', '1.5h', '-1h', ' 1h', '1H', '99999d']) {
    assert.equal(parseBlockDuration(bad), null, bad);
  }
  fc.assert(
    fc.property(fc.string(), (text) => {
      const ms = parseBlockDuration(text);
      return ms === null || (Number.isSafeInteger(ms) && ms > 0);
    }),
  );
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 3649 }), fc.integer({ min: 0, max: 23 }), (d, h) => {
      return parseBlockDuration(`${d}d${h}h`) === d * 86_400_000 + h * 3_600_000;
    }),
  );
});

test('parseNetwork: addresses and CIDRs of both families, host bits cleared', () => {
  const text = (n: ReturnType<typeof parseNetwork>) =>
    n ? `${n.family} ${n.prefix} ${[...n.bytes].join('.')}` : null;
  assert.equal(text(parseNetwork('192.0.2.10')), '4 32 192.0.2.10');
  assert.equal(text(parseNetwork('198.51.100.77/24')), '4 24 198.51.100.0');
  assert.equal(parseNetwork('2001:db8::1/64')?.bytes[2], 0x0d);
  // An IPv4-mapped IPv6 address (or network of ::ffff:0:0/96) is the IPv4 one.
  assert.equal(text(parseNetwork('::ffff:192.0.2.1')), '4 32 192.0.2.1');
  assert.equal(text(parseNetwork('::ffff:198.51.100.77/120')), '4 24 198.51.100.0');
  for (const bad of [
    '',
    '1.2.3',
    '192.0.2.1/33',
    '2001:db8::/129',
    '192.0.2.1/',
    '192.0.2.1/a',
    'fe80::1%eth0',
    'x',
  ]) {
    assert.equal(parseNetwork(bad), null, bad);
  }
  fc.assert(
    fc.property(fc.string(), (s) => {
      const n = parseNetwork(s);
      return n === null || (n.bytes.length === (n.family === 4 ? 4 : 16) && n.prefix <= n.bytes.length * 8);
    }),
  );
  // Any IPv6 address: parsed to its 16 bytes, which Node's own formatting of them reads back to.
  fc.assert(
    fc.property(fc.ipV6(), fc.integer({ min: 0, max: 128 }), (address, prefix) => {
      const n = parseNetwork(`${address}/${prefix}`);
      if (!n) return false;
      const whole = parseNetwork(address);
      if (whole?.family === 4)
        return prefix >= 96 ? n.family === 4 && n.prefix === prefix - 96 : n.family === 6;
      return whole !== null && maskBytes(whole.bytes, prefix).every((b, i) => b === n.bytes[i]);
    }),
  );
  fc.assert(
    fc.property(fc.ipV4(), (address) => [...(parseNetwork(address)?.bytes ?? [])].join('.') === address),
  );
});
