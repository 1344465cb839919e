// Summarizes .cpuprofile files (from `node --cpu-prof`): self time by package/file and the top functions.
//   node bench/cpuprofile-summary.js /tmp/prof/*.cpuprofile [topN]
import { readFileSync } from 'node:fs';

const files = process.argv.slice(2).filter((a) => a.endsWith('.cpuprofile'));
const top = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 25);

function bucket(url) {
  if (!url) return '(native/gc/idle)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return url;
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return `agent-pep ${url.slice(dist + 1)}`;
  const bench = url.indexOf('/bench/');
  if (bench >= 0) return url.slice(bench + 1);
  return url;
}

for (const file of files) {
  const prof = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = prof.timeDeltas;
  for (let i = 0; i < prof.samples.length; i++) {
    const id = prof.samples[i];
    self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0));
  }
  let total = 0;
  const byBucket = new Map();
  const byFn = new Map();
  for (const [id, us] of self) {
    const n = byId.get(id);
    const cf = n.callFrame;
    total += us;
    const b = cf.functionName === '(idle)' ? '(idle)' : bucket(cf.url);
    byBucket.set(b, (byBucket.get(b) ?? 0) + us);
    const key = `${cf.functionName || '(anonymous)'} ${bucket(cf.url)}:${cf.lineNumber + 1}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
  }
  const busy = total - (byBucket.get('(idle)') ?? 0);
  const pct = (us) => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;
  process.stdout.write(`\n${file}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy\n`);
  process.stdout.write('self time by package/file (share of busy time):\n');
  for (const [b, us] of [...byBucket].sort((a, c) => c[1] - a[1]).slice(0, 20)) {
    if (b !== '(idle)') process.stdout.write(`  ${pct(us)}  ${b}\n`);
  }
  process.stdout.write(`top ${top} functions by self time:\n`);
  for (const [f, us] of [...byFn].sort((a, c) => c[1] - a[1]).slice(0, top)) {
    process.stdout.write(`  ${pct(us)}  ${f}\n`);
  }
}
