// The decisions engine's per-address windows (decisions/address-tracker.ts: every rule's window of a unit in one
// row of a shared table, IPv4 /32 units keyed by number in an index of their own) against a plain model of what a
// window keeps: the newest minRecords record times with their criticalities, and the newest time of the most
// recent minSensors sensors; measured over [at - within, at], after a `block remove` (records: at least one per
// sensor). Records of several units (by text and by number) and rules, out of order, as several workers store
// them, and some read again (a batch handed over again): a record counts once. Past maxTracked units the least
// recently seen leaves with its windows.
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { AddressTracker, type Met } from '../../src/decisions/address-tracker.js';
import type { CompiledRule } from '../../src/decisions/rules.js';

interface ModelWindow {
  /** Every record's time and criticality (times are distinct in these runs), each once. */
  records: { at: number; criticality: number }[];
  ids: Set<string>;
  /** The kept sensors and their newest time. */
  sensors: Map<string, number>;
}

function modelObserve(
  w: ModelWindow,
  rule: CompiledRule,
  at: number,
  sensor: string,
  criticality: number,
  id: string,
) {
  if (!w.ids.has(id)) w.records.push({ at, criticality });
  w.ids.add(id);
  const seen = w.sensors.get(sensor);
  if (seen !== undefined) w.sensors.set(sensor, Math.max(seen, at));
  else if (w.sensors.size < Math.max(1, rule.minSensors)) w.sensors.set(sensor, at);
  else {
    const [oldest, time] = [...w.sensors].reduce((a, b) => (b[1] < a[1] ? b : a));
    if (at >= time) {
      w.sensors.delete(oldest);
      w.sensors.set(sensor, at);
    }
  }
}

function modelMeasure(w: ModelWindow, rule: CompiledRule, at: number, notBefore: number): Met | null {
  const from = Math.max(at - rule.withinMs, notBefore + 1);
  const kept = [...w.records].sort((a, b) => a.at - b.at).slice(-Math.max(1, rule.minRecords));
  const inside = kept.filter((r) => r.at >= from && r.at <= at);
  const sensors = [...w.sensors].filter(([, t]) => t >= from && t <= at).map(([s]) => s);
  if (inside.length < rule.minRecords || sensors.length < rule.minSensors) return null;
  return {
    // Each sensor kept sent a record in the window: never fewer records than sensors.
    records: Math.max(inside.length, sensors.length),
    sensors: sensors.sort(),
    criticality: Math.max(0, ...inside.map((r) => r.criticality)),
  };
}

const rule = (minRecords: number, minSensors: number, withinMs: number) =>
  ({ name: 'r', minRecords, minSensors, withinMs }) as CompiledRule;

test('property: AddressTracker keeps and measures each rule’s window as the plain model does', () => {
  const rules = fc.array(
    fc.record({
      minRecords: fc.integer({ min: 1, max: 4 }),
      minSensors: fc.integer({ min: 1, max: 3 }),
      withinMs: fc.integer({ min: 1, max: 500 }),
    }),
    { minLength: 1, maxLength: 3 },
  );
  const steps = fc.array(
    fc.record({
      // Units by text and by number (an IPv4 /32's address as the engine keys it), never the same unit.
      unit: fc.constantFrom<string | number>(
        '192.0.2.1',
        '2001:db8::/64',
        '192.0.2.0/24',
        3_221_225_986,
        0,
        2 ** 32 - 1,
      ),
      rule: fc.nat(),
      sensor: fc.constantFrom('fw1', 'fw2', 'fw3', 'fw4'),
      criticality: fc.integer({ min: 0, max: 4 }),
      notBefore: fc.option(fc.integer({ min: 0, max: 1000 })),
      // The record of an earlier step read again, in place of a new one.
      again: fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: fc.nat(), weight: 1 }),
    }),
    { minLength: 1, maxLength: 60 },
  );
  fc.assert(
    fc.property(
      rules,
      steps,
      fc.array(fc.integer({ min: 0, max: 1000 })),
      fc.integer({ min: 1, max: 7 }),
      (specs, list, times, max) => {
        const compiled = specs.map((s) => rule(s.minRecords, s.minSensors, s.withinMs));
        const tracker = new AddressTracker(max);
        const model = new Map<string, ModelWindow>();
        // The units kept, the least recently seen first: past `max`, it leaves, its windows with it.
        const recent: (string | number)[] = [];
        let dropped = 0;
        const records: {
          unit: string | number;
          index: number;
          at: number;
          sensor: string;
          criticality: number;
          id: string;
        }[] = [];
        // Distinct times, out of order: a step's time is its own number plus an offset from the list.
        list.forEach((step, i) => {
          const record =
            step.again !== null && records.length > 0
              ? (records[step.again % records.length] as (typeof records)[number])
              : {
                  unit: step.unit,
                  index: step.rule % compiled.length,
                  at: ((times[i] ?? i) % 1000) * 100 + i,
                  sensor: step.sensor,
                  criticality: step.criticality,
                  id: `r${i}`,
                };
          records.push(record);
          const { unit, index, at, sensor, criticality, id } = record;
          const r = compiled[index] as CompiledRule;
          const notBefore = step.notBefore ?? Number.NEGATIVE_INFINITY;
          const key = `${unit} ${index}`;
          const kept = recent.indexOf(unit);
          if (kept !== -1) recent.splice(kept, 1);
          else if (recent.length >= max) {
            const gone = recent.shift();
            dropped++;
            for (const k of [...model.keys()]) if (k.startsWith(`${gone} `)) model.delete(k);
          }
          recent.push(unit);
          const w = model.get(key) ?? { records: [], ids: new Set(), sensors: new Map() };
          model.set(key, w);
          modelObserve(w, r, at, sensor, criticality, id);
          const got = tracker.observe(unit, index, r, { at, sensor, criticality, id }, notBefore);
          assert.deepEqual(got, modelMeasure(w, r, at, notBefore), `step ${i}`);
        });
        assert.equal(tracker.size, recent.length);
        assert.equal(tracker.dropped, dropped);
        // evaluate: at each window's newest record, or null for a window never seen (or dropped).
        for (const unit of ['192.0.2.1', '2001:db8::/64', '192.0.2.0/24', 3_221_225_986, 0, 2 ** 32 - 1]) {
          compiled.forEach((r, index) => {
            const w = model.get(`${unit} ${index}`);
            const newest = w ? Math.max(...w.records.map((x) => x.at)) : null;
            const want = w && newest !== null ? modelMeasure(w, r, newest, 50) : null;
            const got = tracker.evaluate(unit, index, r, 50);
            assert.deepEqual(got, want === null ? null : { at: newest, met: want });
          });
        }
      },
    ),
    { numRuns: 2000 },
  );
});
