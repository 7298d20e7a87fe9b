// The layering of src/ (ARCHITECTURE.md, "Map"), checked by `npm run lint:deps` and by
// test/unit/architecture.test.ts. A module may import from its own folder and from any layer below its own,
// never from a layer above, and never from another folder of its own layer.

/** Top to bottom. Each entry is one layer: folders of src/ (or top-level modules) that import nothing of each other. */
const layers = [
  ['cli'],
  ['cluster'],
  ['daemon'],
  ['inputs', 'admin', 'check', 'client', 'outputs', 'decisions', 'sensors'],
  // Country and AS of addresses, added to records as they are appended (wraps the store's RecordLog).
  ['enrich'],
  ['store', 'tls', 'json', 'metrics'],
  ['records', 'data-dir'],
  ['schemas', 'config'],
  [
    'errors.ts',
    'log.ts',
    'log-throttle.ts',
    'keys.ts',
    'watch-files.ts',
    'address-group.ts',
    'connection-slots.ts',
    'relp-frames.ts',
    'system-cas.ts',
    'package-version.ts',
    'wait-at-most.ts',
    'thread-module.ts',
    'node-http.ts',
  ],
  // Below them all: what relp-frames.ts and the syslog framer both hold a partial message in.
  ['held-bytes.ts'],
  // The code the build renders from the rest (the configuration's validator, completion, help outline).
  ['generated'],
];

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The path pattern of one folder (`src/cli/...`) or top-level module (`src/errors.ts`). */
const pattern = (name) =>
  name.endsWith('.ts') ? `^src/${escapeRegExp(name)}$` : `^src/${escapeRegExp(name)}/`;
const anyOf = (names) => names.map(pattern);

const upward = layers.slice(1).map((layer, i) => ({
  name: `no-upward-import-from-${layer.join('-').replace(/\.ts/g, '')}`,
  comment: `${layer.join(', ')} may not import from a layer above it (${layers
    .slice(0, i + 1)
    .flat()
    .join(', ')}): see ARCHITECTURE.md, "Map"`,
  severity: 'error',
  from: { path: anyOf(layer) },
  to: { path: anyOf(layers.slice(0, i + 1).flat()) },
}));

const sideways = layers.flatMap((layer) =>
  layer.length < 2
    ? []
    : layer.map((name) => ({
        name: `no-sideways-import-from-${name.replace(/\.ts$/, '')}`,
        comment: `${name} may not import from the other folders of its layer (${layer
          .filter((other) => other !== name)
          .join(', ')}): see ARCHITECTURE.md, "Map"`,
        severity: 'error',
        from: { path: pattern(name) },
        to: { path: anyOf(layer.filter((other) => other !== name)) },
      })),
);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no import cycles, between modules of one folder either',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'in-a-layer',
      comment:
        'every module of src/ belongs to a layer: add a new folder to `layers` in .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^src/', pathNot: anyOf(layers.flat()) },
      to: {},
    },
    ...upward,
    ...sideways,
    {
      name: 'store-backends-apart',
      comment: 'the files and nats backends import nothing of each other',
      severity: 'error',
      from: { path: '^src/store/(files|nats)/' },
      to: { path: '^src/store/(files|nats)/', pathNot: '^src/store/$1/' },
    },
    {
      name: 'store-backends-private',
      comment:
        'outside src/store/, nothing imports a backend: go through the Store interface (store/store.ts) and the factory (store/open-store.ts)',
      severity: 'error',
      from: { pathNot: '^src/store/' },
      to: { path: '^src/store/(files|nats)/' },
    },
    {
      name: 'only-the-factory-knows-the-backends',
      comment: "of store/'s shared modules, only open-store.ts imports a backend",
      severity: 'error',
      from: { path: '^src/store/[^/]+$', pathNot: '^src/store/open-store\\.ts$' },
      to: { path: '^src/store/(files|nats)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    // Type-only imports count: a type from a layer above is an upward import too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
