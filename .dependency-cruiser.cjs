/**
 * Import rules of agent-pep (`npm run lint:imports`): folders are layers, and an import only goes down
 * (adapters -> enforce -> core -> options / wire / transport / internal). No circles.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const CORE_AND_ABOVE = '^src/(core|options|adapters|enforce|guard\\.ts|enforce\\.ts|hooks|cli|index\\.ts)';
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A circle makes two modules one; split the shared part out below both.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'core-not-up',
      severity: 'error',
      comment: 'core/ is the client pipeline: it imports options/, wire/, transport/, internal/ and the leaf modules, never the enforcement layer, adapters or the CLI.',
      from: { path: '^src/core/' },
      to: { path: '^src/(adapters|enforce|hooks|cli|dev-pdp|index\\.ts|guard\\.ts)' },
    },
    {
      name: 'lower-layers-not-up',
      severity: 'error',
      comment: 'options/, wire/, transport/ and internal/ sit under core/: they import nothing above them.',
      from: { path: '^src/(options|wire|transport|internal)/' },
      to: { path: '^src/(core|adapters|enforce|hooks|cli|dev-pdp|index\\.ts|guard\\.ts|enforce\\.ts)' },
    },
    {
      name: 'internal-is-the-bottom',
      severity: 'error',
      comment: 'internal/ is the bottom layer: it imports only internal/ and the leaf decision/error/version modules.',
      from: { path: '^src/internal/' },
      to: { path: '^src/(options|wire|transport|permit|replay|evidence|telemetry\\.ts)' },
    },
    {
      name: 'service-side-stands-alone',
      severity: 'error',
      comment: 'permit/, replay/ and evidence/ are the service side: nothing from core/, options/ or adapters/.',
      from: { path: '^src/(permit|replay|evidence)/' },
      to: { path: CORE_AND_ABOVE },
    },
    {
      name: 'dev-pdp-imports-below',
      severity: 'error',
      comment: 'The dev PDP imports wire/, permit/, evidence/, internal/ and options/ only (and its own files).',
      from: { path: '^src/dev-pdp/' },
      to: { path: '^src/(core|adapters|enforce|guard\\.ts|enforce\\.ts|hooks|cli|transport|index\\.ts)' },
    },
    {
      name: 'leaves-import-little',
      severity: 'error',
      comment: 'decision.ts, errors.ts and version.ts are leaves: they import only each other.',
      from: { path: '^src/(decision|errors|version)\\.ts$' },
      to: { path: '^src/', pathNot: '^src/(decision|errors|version)\\.ts$' },
    },
    {
      name: 'enforce-not-up',
      severity: 'error',
      comment: 'The enforcement layer imports core/ and below, never an adapter, the hooks or the CLI.',
      from: { path: '^src/(enforce|guard\\.ts|enforce\\.ts)' },
      to: { path: '^src/(adapters|hooks|cli|index\\.ts)' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
