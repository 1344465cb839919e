/**
 * The session of a Cloudflare agent: its instance name (docs/adapters.md, "Sessions").
 * @internal
 */
import { sessionOf } from '../../internal/session.js';

/** A Cloudflare agent (`Agent` of `agents`), as far as this adapter reads it. */
export interface AgentLike {
  /** The agent instance's name (`getAgentByName(env.X, name)`), the session of its decisions. */
  readonly name?: unknown;
  /** The Durable Object's context, whose `id` names an instance without a name. */
  readonly ctx?: { readonly id?: { toString(): string } | undefined } | undefined;
}

/**
 * The session of an agent's decisions: its instance name, else its Durable Object id, else undefined
 * (the client's own session applies). Reading `name` on an agent that has none may throw; that is
 * treated as "no name".
 */
export function agentSession(agent: AgentLike | undefined): string | undefined {
  let name: unknown;
  try {
    name = agent?.name;
  } catch {
    name = undefined;
  }
  const fromName = sessionOf({ thread: name });
  if (fromName !== undefined) return fromName;
  const id = agent?.ctx?.id;
  return id === undefined ? undefined : sessionOf({ thread: String(id) });
}
