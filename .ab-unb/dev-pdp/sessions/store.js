/** The key of one (agent, session) pair: neither part can be mistaken for the other. @internal */
export function sessionKey(agentId, session) {
    return JSON.stringify([agentId, session]);
}
