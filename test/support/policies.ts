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
