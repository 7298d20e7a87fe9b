// A strict parser of the Prometheus text exposition format (0.0.4): every line must be a HELP, a TYPE or a
// sample of a declared family; histograms must be cumulative with +Inf equal to _count. Throws otherwise.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const SUFFIXES: Record<Family['type'], string[]> = {
  counter: ['_total', ''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export function parseExposition(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('exposition must end with a newline');
  const families = new Map<string, Family>();
  const lines = text.slice(0, -1).split('\n');
  for (const [i, line] of lines.entries()) {
    const where = `line ${i + 1}: ${line}`;
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) {
        if (/^# (HELP|TYPE)/.test(line)) throw new Error(`bad comment, ${where}`);
        continue;
      }
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`bad metric name, ${where}`);
      const family = families.get(name) ?? { name, type: 'untyped', help: '', samples: [] };
      if (kind === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) {
          throw new Error(`bad type, ${where}`);
        }
        if (family.samples.length > 0) throw new Error(`TYPE after samples, ${where}`);
        family.type = rest as Family['type'];
      } else family.help = rest;
      families.set(name, family);
      continue;
    }
    const sample = parseSample(line, where);
    const family = familyOf(families, sample.name);
    if (!family) throw new Error(`sample of an undeclared family, ${where}`);
    family.samples.push(sample);
  }
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (family.type === 'counter' && s.value < 0) throw new Error(`negative counter ${s.name}`);
    }
    if (family.type === 'histogram') checkHistogram(family);
  }
  return families;
}

function familyOf(families: Map<string, Family>, sampleName: string): Family | undefined {
  for (const family of families.values()) {
    for (const suffix of SUFFIXES[family.type]) {
      if (sampleName === family.name + suffix) return family;
    }
    if (family.type === 'counter' && family.name.endsWith('_total') && sampleName === family.name)
      return family;
  }
  return undefined;
}

function parseSample(line: string, where: string): Sample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
  if (!m) throw new Error(`bad sample, ${where}`);
  const labels: Record<string, string> = {};
  const body = m[3] ?? '';
  let rest = body;
  while (rest !== '') {
    const lm = /^([^=]+)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"(,|$)/.exec(rest);
    if (!lm) throw new Error(`bad labels, ${where}`);
    const name = lm[1] as string;
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name ${name}, ${where}`);
    if (Object.hasOwn(labels, name)) throw new Error(`repeated label ${name}, ${where}`);
    labels[name] = (lm[2] as string).replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(lm[0].length);
  }
  const raw = m[4] as string;
  const value =
    raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : /^nan$/i.test(raw) ? Number.NaN : Number(raw);
  // NaN in any case: prom-client prints "Nan" before the event loop was sampled, and Prometheus reads
  // values with Go's strconv.ParseFloat, which takes it.
  if (!/^([-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|Inf)|[Nn][Aa][Nn])$/.test(raw)) {
    throw new Error(`bad value, ${where}`);
  }
  return { name: m[1] as string, labels, value };
}

function checkHistogram(family: Family): void {
  const series = new Map<string, Sample[]>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    series.set(key, [...(series.get(key) ?? []), s]);
  }
  for (const [key, samples] of series) {
    const buckets = samples.filter((s) => s.name.endsWith('_bucket'));
    const count = samples.find((s) => s.name === `${family.name}_count`);
    if (!count || !samples.some((s) => s.name === `${family.name}_sum`)) {
      throw new Error(`${family.name}${key}: _sum or _count missing`);
    }
    let previous = -1;
    let previousLe = -Infinity;
    for (const b of buckets) {
      const le = b.labels.le === '+Inf' ? Infinity : Number(b.labels.le);
      if (!(le > previousLe) || b.value < previous)
        throw new Error(`${family.name}${key}: buckets not cumulative`);
      previous = b.value;
      previousLe = le;
    }
    if (previousLe !== Infinity || previous !== count.value) {
      throw new Error(`${family.name}${key}: +Inf bucket missing or not equal to _count`);
    }
  }
}

/** The sample `name` whose labels include `labels`, or undefined when there is none. */
export function findSample(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): Sample | undefined {
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name !== name) continue;
      if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s;
    }
  }
  return undefined;
}

/** The value of the sample `name` whose labels include `labels` (0 when absent: a series not yet created). */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number {
  return findSample(families, name, labels)?.value ?? 0;
}
