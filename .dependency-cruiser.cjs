// The layers of src/, lowest first. A module may import its own layer and the layers below it, never
// one above, and no import cycle is allowed anywhere: `npm run lint:deps` (run by .ci/run) checks it,
// and that testkit/ (shared by tests and benchmarks) imports neither.
const LAYERS = [
  ['core', '^src/core/'],
  ['compute', '^src/compute/'],
  ['store', '^src/store/'],
  ['pipeline and detect', '^src/(pipeline|detect)/'],
  ['query, diagnose and tenancy', '^src/(query|diagnose|tenancy)/'],
  ['receivers and api', '^src/(receivers|api)/'],
  ['client', '^src/client/'],
  ['entry points, cli and mcp', '^src/(cli|mcp)/|^src/[^/]+\\.ts$'],
];

const upward = LAYERS.slice(0, -1).map(([name, path], i) => ({
  name: `no-upward-from-${name.replace(/[^a-z]+/g, '-')}`,
  comment: `${name} may not import a higher layer`,
  severity: 'error',
  from: { path },
  to: { path: LAYERS.slice(i + 1).map(([, p]) => `(${p})`).join('|') },
}));

module.exports = {
  forbidden: [
    ...upward,
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    { name: 'src-not-to-tests-or-bench', severity: 'error', from: { path: '^src/' }, to: { path: '^(test|testkit|bench)/' } },
    // What the tests and the benchmarks share serves both, so it imports neither.
    { name: 'testkit-not-to-tests-or-bench', severity: 'error', from: { path: '^testkit/' }, to: { path: '^(test|bench)/' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
