// Section `devpdp` of the benchmark: the dev PDP beside a real Cerbos (issue 41).
//
// The same client and the same requests as the `cerbos` section's agent-pep row: agent-pep's
// `checkInput(CONTENT)` over AuthZEN (CONTRACT.md section 9), one PEP, 16 workers. AuthZEN is the one
// wire both PDPs speak, so the PEP, its request bytes and its answer checks are identical; only the
// server differs. Each PDP is a process of its own on the server CPU (lib.js pinServer), as Cerbos is:
//   - real Cerbos with test/fixtures/cerbos/contract/ (from its npm package, as the cerbos section);
//   - `agent-pep dev-pdp` with test/fixtures/dev-pdp/contract-policy.json, the same rules for the dev
//     PDP (the Cerbos row's policy, rule for rule);
//   - `agent-pep dev-pdp` with the demo's policy (demo/policy.json: 115 latches, intents, values).
// The dev PDP does what it always does on top: it keeps the session (the PEP names one), and signs and
// chains an evidence record a decision; Cerbos keeps no state and writes no audit log here.
// Ratios (run.js): devpdp_vs_cerbos_c16 (target >= 1.0), devpdp_demo_policy_vs_contract_policy_c16 (info).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pinServer, rowOf, runRounds, skippedRow, spawnCerbos } from './lib.js';

export const DEVPDP_CONCURRENCY = 16;

export const DEVPDP_ROWS = Object.freeze({
  contract: 'agent-pep checkInput (authzen, dev PDP, contract policy)',
  demo: 'agent-pep checkInput (authzen, dev PDP, demo policy)',
  cerbos: 'agent-pep checkInput (authzen, real Cerbos, beside the dev PDP)',
});

/**
 * Starts `agent-pep dev-pdp --policy FILE` (the CLI of dist/) on a free loopback port, quiet (no record
 * lines on stdout), pinned to the server CPU; waits at most 20 s for its "listening on" line.
 * @returns {Promise<{ url: string, stop(): Promise<void> } | { missing: true, message: string }>}
 */
export async function spawnDevPdp(root, policyFile) {
  const cli = fileURLToPath(new URL('dist/cli/main.js', root));
  const child = spawn(process.execPath, [cli, 'dev-pdp', '--policy', policyFile, '--port', '0', '--quiet'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const collect = (c) => {
    if (out.length < 65536) out += c;
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('error', () => {});
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  };
  const url = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), 20_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      } else if (child.exitCode === null && child.signalCode === null) setTimeout(check, 20);
      else {
        clearTimeout(timer);
        resolve(undefined);
      }
    };
    check();
  });
  if (url === undefined) {
    await stop();
    return { missing: true, message: `agent-pep dev-pdp did not start (run \`npm run build\`): ${out.slice(-300)}` };
  }
  pinServer(child.pid);
  return { url, pid: child.pid, stop };
}

/**
 * Runs the section: three rows measured in interleaved rounds (lib.js runRounds), each a `checkInput`
 * that must be an ALLOW the PDP answered (not synthesized). Skipped, with the reason, when agent-pep
 * cannot be loaded, Cerbos has no binary here, or the dev PDP's CLI does not start.
 * @param fixed - the `cerbos` section's agent id, session and content
 */
export async function benchDevPdp(ap, pepWhy, profile, rows, log, cleanups, root, fixed) {
  const names = Object.values(DEVPDP_ROWS);
  const skip = (why) => {
    for (const name of names) rows.push(skippedRow('devpdp', name, DEVPDP_CONCURRENCY, why));
  };
  if (pepWhy) return skip(pepWhy);
  const servers = [];
  const peps = [];
  const closeAll = async () => {
    await Promise.all(peps.map((p) => p.close().catch(() => {})));
    await Promise.all(servers.map((s) => s.stop().catch(() => {})));
  };
  cleanups.push(closeAll);
  try {
    const cerbos = await spawnCerbos(fileURLToPath(new URL('test/fixtures/cerbos/contract/', root)));
    if (cerbos.missing) return skip(cerbos.message);
    servers.push(cerbos);
    ap.cerbosVersion = cerbos.version;
    const contract = await spawnDevPdp(
      root,
      fileURLToPath(new URL('test/fixtures/dev-pdp/contract-policy.json', root)),
    );
    if (contract.missing) return skip(contract.message);
    servers.push(contract);
    const demo = await spawnDevPdp(root, fileURLToPath(new URL('demo/policy.json', root)));
    if (demo.missing) return skip(demo.message);
    servers.push(demo);
    const clientOf = (name, url) => {
      const pep = ap.pep.createPep({
        pdpUrl: url,
        agentId: fixed.agentId,
        session: fixed.session,
        protocol: 'authzen',
        permits: false,
      });
      peps.push(pep);
      return {
        name,
        call: async () => {
          const d = await pep.checkInput(fixed.content);
          return d.verdict === 'ALLOW' && d.synthesized === undefined;
        },
      };
    };
    const clients = [
      clientOf(DEVPDP_ROWS.contract, contract.url),
      clientOf(DEVPDP_ROWS.cerbos, cerbos.url),
      clientOf(DEVPDP_ROWS.demo, demo.url),
    ];
    log(`devpdp: Cerbos ${cerbos.version} at ${cerbos.url}, dev PDP at ${contract.url} and ${demo.url}`);
    const cells = await runRounds('devpdp', clients, DEVPDP_CONCURRENCY, profile, log);
    for (const c of clients) {
      const cell = cells.get(c.name);
      const extra = cell.errors > 0 ? { note: `invalid answers: ${String(cell.lastError ?? 'not an ALLOW')}` } : {};
      rows.push(rowOf('devpdp', c.name, DEVPDP_CONCURRENCY, cell, extra));
    }
  } finally {
    await closeAll();
  }
}
