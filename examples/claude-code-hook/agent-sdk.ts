/**
 * The Claude Agent SDK adapter in a `query()` call (compiled, not run by the example script: it needs a
 * model). `pepCanUseTool` decides the calls the SDK asks permission for; `pepHooks` sees every prompt,
 * tool call and tool result, so a call the host's own rules allow is still checked.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { query } from '@anthropic-ai/claude-agent-sdk';
import { createPep } from 'agent-pep';
import { pepCanUseTool, pepHooks } from 'agent-pep/claude-agent-sdk';

/** Runs one prompt with every step checked by the PDP at `pdpUrl`; resolves with the result text. */
export async function runAgent(prompt: string, pdpUrl = 'http://127.0.0.1:8787'): Promise<string> {
  // #region claude-agent-sdk-adapter
  const sessionId = randomUUID();
  const pep = createPep({
    pdpUrl,
    agentId: 'coder',
    session: sessionId, // the SDK session: the PDP sees one conversation
    permits: { keys: `${pdpUrl}/.well-known/jwks.json`, issuer: pdpUrl },
  });
  let result = '';
  for await (const message of query({
    prompt,
    options: {
      sessionId,
      canUseTool: pepCanUseTool(pep), // allow / deny; ESCALATE is a deny with the held text
      hooks: pepHooks(pep), // UserPromptSubmit, PreToolUse, PostToolUse; onFailure: 'block'
    },
  })) {
    if (message.type === 'result' && message.subtype === 'success') result = message.result;
  }
  await pep.close();
  // #endregion claude-agent-sdk-adapter
  return result;
}
