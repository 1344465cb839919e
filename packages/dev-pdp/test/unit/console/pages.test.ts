import { describe, expect, it } from 'vitest';
import { html } from '../../../src/console/html.js';
import { consolePage, type PendingView, pretty, visible } from '../../../src/console/pages.js';

const text = (part: ReturnType<typeof visible>) => html`${part}`.text;

function pendingOf(args: Record<string, unknown>): PendingView {
  return {
    id: 'esc_1',
    subject: { agentId: 'support-ai', session: 's1', stage: 'action', tool: 'send_email', hash: 'HASH_abc123' },
    openedAt: 0,
    requestId: 'r1',
    latches: ['review'],
    args,
    history: [],
  };
}

function render(p: PendingView): string {
  return consolePage({
    csrf: 't',
    now: 1000,
    pending: [p],
    decisions: [],
    reviews: [],
    evidence: { status: 'ok', count: 0 } as never,
    filter: { verdict: '', session: '' },
  });
}

describe('what a reviewer approves is what they saw', () => {
  it('the args are shown whole, however long (no cut at 20,000 characters)', () => {
    const body = `${'a'.repeat(30_000)}THE-END`;
    const page = render(pendingOf({ body }));
    expect(page).toContain('THE-END');
    expect(page).not.toContain('more characters');
    expect(pretty({ body })).toHaveLength(JSON.stringify({ body }, null, 2).length);
  });

  it('a right-to-left override and invisible characters are marked ⟨U+…⟩, as text; none is left raw', () => {
    const page = render(pendingOf({ to: 'evil\u202Egpj.exe', note: 'a\u200Bb\u2066c\uFEFF', tag: 'x\u{E0041}' }));
    for (const marker of ['⟨U+202E⟩', '⟨U+200B⟩', '⟨U+2066⟩', '⟨U+FEFF⟩', '⟨U+E0041⟩']) expect(page).toContain(marker);
    expect(page).not.toMatch(/[\u202E\u200B\u2066\uFEFF]|\u{E0041}/u);
  });

  it('a marker is markup of the console, the rest of the text escaped: agent text never becomes HTML', () => {
    const out = text(visible('<b>\u202E</b>'));
    expect(out).toBe(
      '&lt;b&gt;<mark class="unseen" title="an invisible or direction-changing character">⟨U+202E⟩</mark>&lt;/b&gt;',
    );
    expect(text(visible('plain\ntext\t ok'))).toBe('plain\ntext\t ok');
  });

  it('the act_hash the approval is bound to is shown', () => {
    expect(render(pendingOf({ a: 1 }))).toMatch(/data-act-hash="HASH_abc123">HASH_abc123</);
  });
});
