#!/usr/bin/env node
// STUB: replaced by the dev-pdp work (issue 4).
process.stderr.write('agent-pep: not implemented\n');
process.exit(2);
