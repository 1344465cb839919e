/**
 * agent-pep/mcp on the MCP 2.x stack alone (CONTRACT section 16: both stacks are optional peers, chosen
 * by the object given): the packed package installed in a scratch project beside `@modelcontextprotocol/server`
 * and `@modelcontextprotocol/client` 2.x only (packed from this repo's node_modules; their other
 * dependencies from the npm registry), no `@modelcontextprotocol/sdk`. A guard file type-checks with
 * `tsc --strict` (`skipLibCheck: false`), and runs: a guarded 2.x client calls tools on a guarded 2.x
 * McpServer over the SDK's InMemoryTransport; the dev PDP allows one and blocks the other, which never runs.
 * Needs `npm run build` (`npm test` builds first) and the npm registry (or its cache).
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { useDevPdp } from '../../support/dev-pdp-suite.js';
import { ROOT } from '../../support/processes.js';

const execFileAsync = promisify(execFile);

const dev = useDevPdp({
  policy: {
    agents: ['support-ai'],
    latches: [{ id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' }],
  },
});

/** The guard file of a 2.x-only project: server and client guarded, one allowed call, one blocked. */
const GUARD_FILE = `
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { createPep } from 'agent-pep';
import { guardMcpClient, guardMcpServer } from 'agent-pep/mcp';
import { z } from 'zod';

const pdpUrl = process.argv[2] as string;
const verdicts = new Set<string>();
const pep = createPep({
  pdpUrl,
  agentId: 'support-ai',
  session: 'sess_v2only',
  permits: false,
  onDecision: (e) => {
    if (e.stage === 'action') verdicts.add(e.tool + ':' + e.decision.verdict);
  },
});
const ran: string[] = [];
const server = new McpServer({ name: 'payments', version: '2.0.0' });
const lookup = server.registerTool('lookup_order', { inputSchema: z.object({ id: z.string() }) }, async ({ id }) => {
  ran.push('lookup_order');
  return { content: [{ type: 'text' as const, text: 'order ' + id }] };
});
const bank = server.registerTool('bank_transfer', { inputSchema: z.object({ to: z.string() }) }, async () => {
  ran.push('bank_transfer');
  return { content: [{ type: 'text' as const, text: 'sent' }] };
});
const guarded: McpServer = guardMcpServer(pep, server, { tools: { lookup_order: lookup, bank_transfer: bank } });

const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await guarded.connect(serverSide);
const client = new Client({ name: 'agent', version: '1.0.0' });
await client.connect(guardMcpClient(pep, clientSide));
const allowed = await client.callTool({ name: 'lookup_order', arguments: { id: 'ord_1' } });
const blocked = await client.callTool({ name: 'bank_transfer', arguments: { to: 'acct_9' } });
await client.close();
await pep.close?.();
let sdkV1 = 'missing';
try {
  await import('@modelcontextprotocol/sdk' + '/types.js');
  sdkV1 = 'installed';
} catch {}
const refused = { allowed: allowed.isError === true, blocked: blocked.isError === true };
console.log(JSON.stringify({ refused, verdicts: [...verdicts].sort(), ran, sdkV1 }));
`;

/** Runs a command in `cwd` without the npm_* settings of the npm run that started the tests. */
function run(cmd: string, args: string[], cwd: string): string {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')));
  return execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 240_000 });
}

/** Packs the directory into `dir`; the tarball's file name. */
function pack(from: string, dir: string): string {
  const out = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], from)) as {
    filename: string;
  }[];
  return `file:./${(out[0] as { filename: string }).filename}`;
}

it('with only the MCP 2.x packages installed, agent-pep/mcp type-checks under tsc --strict and guards a 2.x server and client', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-pep-mcp-v2only-'));
  try {
    const mcp = (name: string) => join(ROOT, 'node_modules', '@modelcontextprotocol', name);
    const dependencies = {
      'agent-pep': pack(ROOT, dir),
      '@modelcontextprotocol/core': pack(mcp('core'), dir),
      '@modelcontextprotocol/server': pack(mcp('server'), dir),
      '@modelcontextprotocol/client': pack(mcp('client'), dir),
      zod: pack(join(ROOT, 'node_modules', 'zod'), dir),
    };
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'v2-only', private: true, type: 'module', dependencies }),
    );
    run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', '--omit=peer'], dir);
    expect(existsSync(join(dir, 'node_modules', '@modelcontextprotocol', 'sdk'))).toBe(false);

    writeFileSync(join(dir, 'guard.ts'), GUARD_FILE);
    const tsconfig = {
      compilerOptions: {
        strict: true,
        skipLibCheck: false,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        outDir: 'out',
        typeRoots: [join(ROOT, 'node_modules', '@types')],
        types: ['node'],
      },
      files: ['guard.ts'],
    };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    // (a) tsc --strict: a TS2307 or any error in agent-pep's declarations fails here (the output names it).
    run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], dir);

    // (b) node runs the compiled file against the dev PDP.
    // Asynchronously: the dev PDP answers from this process.
    const { stdout: out } = await execFileAsync(process.execPath, [join(dir, 'out', 'guard.js'), dev.pdp.url], {
      cwd: dir,
      timeout: 60_000,
    });
    const got = JSON.parse(out.trim().split('\n').at(-1) as string) as Record<string, unknown>;
    expect(got).toEqual({
      refused: { allowed: false, blocked: true },
      verdicts: ['bank_transfer:BLOCK', 'lookup_order:ALLOW'],
      ran: ['lookup_order'],
      sdkV1: 'missing',
    });
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).not.toContain('@modelcontextprotocol/sdk');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 300_000);
