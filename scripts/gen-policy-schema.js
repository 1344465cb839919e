#!/usr/bin/env node
// Writes packages/dev-pdp/schema/policy.schema.json from the zod schema of the dev PDP's policy (zod's z.toJSONSchema).
// Run after a build: `npm run build && node scripts/gen-policy-schema.js`. A unit test fails when the
// committed file differs from a fresh generation.
import { writeFile } from 'node:fs/promises';
import { policyJsonSchema } from '../packages/dev-pdp/dist/policy.js';

const target = new URL('../packages/dev-pdp/schema/policy.schema.json', import.meta.url);
await writeFile(target, `${JSON.stringify(policyJsonSchema(), null, 2)}\n`, 'utf8');
process.stdout.write(`wrote ${target.pathname}\n`);
