/** Latches the tests share, as the contract's section 6 example writes them. */

/** ESCALATE a refund over 500 (the contract's example). */
export const REFUND_REVIEW = {
  id: 'refund-review',
  stage: 'action',
  tool: 'refund_payment',
  when: { 'args.amount': { gt: 500 } },
  verdict: 'ESCALATE',
  reason: 'refunds over 500 need review',
} as const;

/** WARN and redact phone numbers on output and delivery (the contract's example). */
export const PHONE_REDACTION = {
  id: 'phone-redaction',
  stage: ['output', 'delivery'],
  content: '\\b\\d{3}[-.]\\d{3}[-.]\\d{4}\\b',
  verdict: 'WARN',
  redact: '[phone]',
  reason: 'phone numbers are redacted',
} as const;

/** A session-aware policy (docs/dev-pdp.md): fetched content labels the session, money after it is held. */
export const SESSION_POLICY = {
  agents: ['agent'],
  toolGroups: { fetch: ['web_fetch', 'read_*_email'], money: ['send_money', 'bank_*'] },
  latches: [
    { id: 'untrusted-input', stage: 'context_egress', tool: '@fetch', verdict: 'ALLOW', labels: ['untrusted'] },
    {
      id: 'money-after-untrusted',
      stage: 'action',
      tool: '@money',
      session: { has: 'untrusted' },
      verdict: 'ESCALATE',
      reason: 'money after untrusted content',
    },
    { id: 'wipe', stage: 'action', tool: 'delete_all', verdict: 'BLOCK', labels: ['denied'] },
    {
      id: 'watched',
      stage: 'action',
      tool: '@money',
      session: { has: 'denied' },
      verdict: 'BLOCK',
      reason: 'denied before',
    },
    { id: 'step', stage: 'action', tool: 'step_*', verdict: 'ALLOW' },
    { id: 'tenth', stage: 'action', tool: 'step_*', session: { count: { latch: 'step' }, gte: 10 }, verdict: 'BLOCK' },
  ],
};

/** The tool-surface tests' latches (docs/visibility.md): one tool group always refused, one refused on its args. */
export const TOOL_SURFACE_LATCHES = [
  { id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' },
  {
    id: 'big-refunds',
    stage: 'action',
    tool: 'refund_payment',
    when: { 'args.amount': { gt: 500 } },
    verdict: 'BLOCK',
    reason: 'refunds over 500 are refused',
  },
] as const;
