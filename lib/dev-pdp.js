// `agent-pep/dev-pdp`: the local reference PDP, which lives in its own package, `@agent-pep/dev-pdp`
// (CONTRACT section 19). This entry only re-exports it; without that package installed, importing it
// fails with Node's ERR_MODULE_NOT_FOUND naming '@agent-pep/dev-pdp' (install it as a devDependency:
// `npm install -D @agent-pep/dev-pdp`). Nothing else in agent-pep imports it.
export * from '@agent-pep/dev-pdp';
