/**
 * The session of a held call as the console renders it (docs/dev-pdp.md, "The reviewer console"): every
 * text from a grant or a flow is escaped and has its invisible and direction-changing characters marked;
 * "no grants" when the session had none; the reason a call is outside a grant in words.
 */
import { describe, expect, test } from 'vitest';
import { flowsBlock, grantsBlock } from '../../../src/console/held.js';
import type { HeldSession } from '../../../src/held-session.js';

const RLO = '\u202E';
const NOW = 10_000_000;

const session: HeldSession = {
  grants: [
    {
      id: `pay${RLO}`,
      tools: [`@money${RLO}`, '<b>x</b>'],
      args: {
        [`to${RLO}`]: { eq: `bob${RLO}` },
        cc: { in: [`a${RLO}`, 2] },
        memo: { matches: `<script>${RLO}` },
        amount: { lte: 50 },
        note: { fromUser: true },
      },
      uses: 2,
      expiresAt: NOW + 120_000,
      match: 'arg_outside',
      failedPath: `to${RLO}`,
    },
  ],
  flows: [
    {
      path: `iban${RLO}`,
      kind: `iban${RLO}`,
      sources: [{ tool: `web_fetch${RLO}`, origin: `web${RLO}`, groups: [`fetch${RLO}`] }],
    },
    { path: 'to', kind: 'email', sources: [{ tool: 'user', origin: 'user', groups: [] }] },
  ],
  origin: `tool:send${RLO}`,
};

describe('grant and flow text is shown as text, with hidden characters marked', () => {
  test('no U+202E is left raw and no markup from a grant survives, in grants or flows', () => {
    const out = grantsBlock(session, true, NOW).text + flowsBlock(session).text;
    expect(out).not.toContain(RLO);
    expect(out).not.toContain('<script>');
    expect(out).not.toContain('<b>');
    expect(out).toContain('&lt;b&gt;x&lt;/b&gt;');
    // every field: id, tools, path, eq, in, matches, failed path, flow path, kind, tool, origin, group, called origin
    expect(out.match(/⟨U\+202E⟩/g)).toHaveLength(13);
  });

  test('constraints, uses, expiry and why the call is not inside, in words', () => {
    const out = grantsBlock(session, true, NOW).text;
    expect(out).toContain('≤ <code class="value">50</code>');
    expect(out).toContain("in the user's own words");
    expect(out).toContain('2 uses left');
    expect(out).toContain('expires in 2 min');
    expect(out).toContain('not inside: outside the constraint: <code>args.to');
    expect(out).toContain("The call is inside none of the session's grants.");
    expect(flowsBlock(session).text).toContain('seen in the user&#39;s input');
  });

  test('"no grants" when the session had none, or the escalation kept none (sessionless, or older)', () => {
    for (const held of [{ grants: [], flows: [] }, undefined]) {
      expect(grantsBlock(held, true, NOW).text).toContain('no grants');
    }
    expect(grantsBlock(session, true, NOW).text).not.toContain('no grants');
  });

  test('off the action stage no "inside" line is written', () => {
    const { match: _m, failedPath: _p, ...plain } = session.grants[0] as HeldSession['grants'][number];
    expect(grantsBlock({ grants: [plain], flows: [] }, false, NOW).text).not.toContain('inside');
  });
});
