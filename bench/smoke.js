// Smoke run of the benchmark: every scenario for a handful of iterations (< 10 s), no results.json.
// Exits 0 when every scenario ran (agent-pep rows may be skipped until the client is built), 1 otherwise.
import { formatTable, PROFILES, runBench } from './run.js';

const results = await runBench({ profile: PROFILES.smoke, log: () => {} });
process.stdout.write(`${formatTable(results)}\n\nsmoke run in ${results.duration_s} s\n`);
const broken = results.rows.filter((r) => !r.skipped && r.errors > 0 && r.scenario !== 'memory');
if (broken.length > 0) {
  process.stderr.write(`smoke: invalid answers in ${broken.map((r) => `${r.scenario}/${r.client}`).join(', ')}\n`);
  process.exit(1);
}
