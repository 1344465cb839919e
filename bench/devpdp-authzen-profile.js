// The dev PDP's CLI (`agent-pep dev-pdp --quiet`, a process of its own, as bench/devpdp.js starts it) driven by
// `pep.checkInput(CONTENT)` over AuthZEN from 16 workers with the contract policy; prints the decisions a
// second and the µs of the SERVER process's CPU a decision (from /proc/PID/stat, Linux):
//
//   node bench/devpdp-authzen-profile.js [secs] [extra node flags for the server, e.g. --cpu-prof]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const [secs = '5', ...flags] = process.argv.slice(2);
const root = new URL('../', import.meta.url);
const cli = fileURLToPath(new URL('dist/cli/main.js', root));
const policyFile = fileURLToPath(new URL('test/fixtures/dev-pdp/contract-policy.json', root));
const child = spawn(process.execPath, [...flags, cli, 'dev-pdp', '--policy', policyFile, '--port', '0', '--quiet'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
const url = await new Promise((resolve) => {
  child.stdout.on('data', (c) => {
    out += c;
    const m = /listening on (http:\/\/\S+)/.exec(out);
    if (m) resolve(m[1]);
  });
});
const ticks = () => {
  const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
};
const ap = await import('agent-pep');
const CONTENT =
  'Hi, my order ord_1842 arrived damaged. The box was crushed and the ceramic mug inside is broken. ' +
  'Could you please refund it to my card, or send a replacement? I attached photos to my earlier email. Thanks, Ana';
const pep = ap.createPep({
  pdpUrl: url,
  agentId: 'support-ai',
  session: 'sess_bench_0001',
  protocol: 'authzen',
  permits: false,
});
const run = async (ms) => {
  const end = performance.now() + ms;
  let ops = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (performance.now() < end) {
        const d = await pep.checkInput(CONTENT);
        if (d.verdict !== 'ALLOW' || d.synthesized !== undefined) throw new Error(`not an ALLOW: ${JSON.stringify(d)}`);
        ops++;
      }
    }),
  );
  return ops;
};
await run(1000);
const c0 = ticks();
const t0 = performance.now();
const ops = await run(Number(secs) * 1000);
const ms = performance.now() - t0;
const cpuUs = (ticks() - c0) * 10_000; // USER_HZ 100
console.log(
  `${Math.round((ops / ms) * 1000)} decisions/s, server ${Math.round(cpuUs / ops)} µs CPU a decision (${ops} decisions)`,
);
await pep.close();
child.kill('SIGINT');
await new Promise((r) => child.once('exit', r));
