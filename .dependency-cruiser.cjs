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
      from: { path: '^(src|packages/dev-pdp/src)/' },
      to: { circular: true },
    },
    {
      name: 'core-not-up',
      severity: 'error',
      comment: 'core/ is the client pipeline: it imports options/, wire/, transport/, internal/ and the leaf modules, never the enforcement layer, adapters or the CLI.',
      from: { path: '^src/core/' },
      to: { path: '^src/(adapters|enforce|hooks|cli|index\\.ts|guard\\.ts)' },
    },
    {
      name: 'lower-layers-not-up',
      severity: 'error',
      comment: 'options/, wire/, transport/ and internal/ sit under core/: they import nothing above them.',
      from: { path: '^src/(options|wire|transport|internal)/' },
      to: { path: '^src/(core|adapters|enforce|hooks|cli|index\\.ts|guard\\.ts|enforce\\.ts)' },
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
      name: 'dev-pdp-through-its-seam',
      severity: 'error',
      comment: 'The reference PDP is its own package (packages/dev-pdp): it reaches the SDK only through agent-pep/internal (and the public entry), never a file of src/ by path.',
      from: { path: '^packages/dev-pdp/src/' },
      to: { path: '^src/', pathNot: '^src/(internal-api|index)\\.ts$' },
    },
    {
      name: 'sdk-never-imports-the-pdp',
      severity: 'error',
      comment: 'The SDK does not depend on the PDP package (agent-pep dev-pdp loads it by name at run time).',
      from: { path: '^src/' },
      to: { path: '^packages/' },
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
      name: 'telemetry-not-to-permit',
      severity: 'error',
      comment: 'telemetry.ts sits under core/ and beside the service side: it imports internal/ and the leaves, never permit/ (what both need, such as tool-name normalization, lives in internal/).',
      from: { path: '^src/telemetry\\.ts$' },
      to: { path: '^src/(permit|replay|evidence|core|options|adapters|enforce|hooks|cli)/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: { path: '^(src|packages/dev-pdp/src)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^(src|packages/dev-pdp/src)/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
