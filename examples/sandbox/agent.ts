/**
 * Routes to a sandbox: an interceptor routes every `run_script` call to a local process sandbox, so the
 * script the model wrote never runs in the agent's own process (docs/interceptors.md). The PDP still
 * decides the call and mints its permit; `guardTool` then runs the sandbox runner, never the tool's body.
 * Runs offline, against a local reference PDP it starts itself:
 *
 *   npm run example:sandbox
 *
 * @module
 */
import { createPep, type Interceptor, PolicyEnforcementError } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';
import { localProcessSandbox } from './runner.js';

const pdp = await startDevPdp({ policy: { agents: ['coder'], latches: [] } });

// Every script goes to the sandbox; the PDP is still asked, and a BLOCK of its stands.
const scriptsInSandbox: Interceptor = {
  name: 'scripts-in-sandbox',
  stages: ['action'],
  before: (step) =>
    step.tool === 'run_script' ? { action: 'route', to: 'local-process', profile: 'no-env' } : { action: 'proceed' },
};

const pep = createPep({
  pdpUrl: pdp.url,
  agentId: 'coder',
  session: 'sess_sandbox',
  permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
  interceptors: [scriptsInSandbox],
  sandboxes: { 'local-process': localProcessSandbox(5000) },
});

// The tool's own body: what would run on the host without the route. It never runs here.
const runScript = pep.guardTool('run_script', async (_args: { code: string }) => {
  throw new Error('run_script ran on the host');
});

process.env.HOST_SECRET = 'host-only-token';
try {
  const result = await runScript({ code: 'console.log(process.env.HOST_SECRET ?? "no secret here", process.cwd())' });
  console.log(JSON.stringify(result));
} catch (err) {
  if (err instanceof PolicyEnforcementError) console.log(err.toolMessage);
  else throw err;
} finally {
  delete process.env.HOST_SECRET;
  await pep.close();
  await pdp.close();
}
