/**
 * The Claude Agent SDK adapter in a `query()` call. Compiled by `npm run build:examples` and checked
 * by the typecheck; no npm script runs it, because it needs a model (an Anthropic API key) and a PDP:
 *
 *   npx agent-pep dev-pdp --policy examples/claude-code-hook/policy.json
 *   ANTHROPIC_API_KEY=... node build/examples/claude-agent-sdk/agent.js
 *
 * `pepCanUseTool` decides the calls the SDK asks permission for; `pepHooks` sees every prompt, tool
 * call and tool result, so a call the host's own rules allow is still checked.
 * @module
 */
// #region claude-agent-sdk-adapter
import { randomUUID } from 'node:crypto';
import { query } from '@anthropic-ai/claude-agent-sdk';
import { createPep } from 'agent-pep';
import { pepCanUseTool, pepHooks } from 'agent-pep/claude-agent-sdk';

// The base URL without its trailing `/`, so the JWKS URL and the issuer match the PDP's (one rule: docs/api.md).
const pdpUrl = (process.env.PDP_URL ?? 'http://127.0.0.1:8787').replace(/\/+$/, '');
const sessionId = randomUUID(); // the SDK's session is the PEP's session
const pep = createPep({
  pdpUrl,
  agentId: 'coder',
  session: sessionId,
  permits: { keys: `${pdpUrl}/.well-known/jwks.json`, issuer: pdpUrl },
});

for await (const message of query({
  prompt: 'Clean the build folder',
  options: {
    sessionId,
    canUseTool: pepCanUseTool(pep), // allow or deny; an ESCALATE is a deny with the held text
    hooks: pepHooks(pep), // UserPromptSubmit, PreToolUse, PostToolUse, each with onFailure: 'block'
  },
})) {
  if (message.type === 'result') console.log(message.subtype === 'success' ? message.result : message.subtype);
}
await pep.close();
// #endregion claude-agent-sdk-adapter
