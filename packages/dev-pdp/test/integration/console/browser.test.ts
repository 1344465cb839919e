/**
 * The reviewer console in a real browser (Debian's Chromium through playwright-core): sign-in, live
 * updates, approve/deny with the agent's call running once, TTLs, CSRF, agent-supplied HTML shown as
 * text, the evidence view, and the CSP (docs/dev-pdp.md, "The reviewer console").
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPep, normalizeToolName, type Pep, verifyEvidence } from '../../../../../src/index.js';
import { chromiumUnavailableReason, launchChromium } from '../../../../../test/support/chromium.js';
import { REFUND_REVIEW } from '../../../../../test/support/policies.js';
import { type DevPdp, type DevPdpOptions, startDevPdp } from '../../../src/index.js';

const skip = chromiumUnavailableReason();
const REVIEWER = 'reviewer-key-4f1c';
const AGENT = 'agent-key-9d2e';
const POLICY = { agents: ['support-ai'], latches: [REFUND_REVIEW] };

let browser: Browser;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  if (!skip) browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setUp(
  options: Partial<DevPdpOptions> = {},
): Promise<{ pdp: DevPdp; pep: Pep; context: BrowserContext }> {
  const pdp = await startDevPdp({ policy: POLICY, apiKey: AGENT, reviewerApiKey: REVIEWER, log: false, ...options });
  const pep = createPep({
    pdpUrl: pdp.url,
    agentId: 'support-ai',
    session: 'sess-1',
    apiKey: AGENT,
    permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
  });
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  cleanups.push(
    () => pdp.close(),
    () => pep.close(),
    () => context.close(),
  );
  return { pdp, pep, context };
}

async function signIn(page: Page, pdp: DevPdp, key = REVIEWER): Promise<number | undefined> {
  await page.goto(`${pdp.url}/console`);
  await page.locator('input[type=password][name=key]').fill(key);
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/console/sign-in')),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  await page.waitForLoadState();
  return response.status();
}

/** A refund tool guarded by the PEP, counting its runs. */
function refundTool(pep: Pep) {
  const runs: unknown[] = [];
  const tool = pep.guardTool('refund_payment', (args) => {
    runs.push(args);
    return 'refunded';
  });
  const call = (args: Record<string, unknown>) =>
    tool(args).then(
      (value) => ({ ran: true as const, value }),
      (error: { name?: string; code?: string; decision?: { escalationId?: string } }) => ({
        ran: false as const,
        error: error.name,
        escalationId: error.decision?.escalationId,
      }),
    );
  return { runs, call };
}

describe.skipIf(skip !== undefined)('the reviewer console in Chromium', { timeout: 90_000 }, () => {
  it('signs in with the reviewer key: an HttpOnly, SameSite=Strict session cookie, and the console', async () => {
    const { pdp, context } = await setUp();
    const page = await context.newPage();
    expect(await signIn(page, pdp)).toBe(303);
    await expect.poll(() => page.locator('body').getAttribute('data-page')).toBe('console');
    const cookies = await context.cookies(`${pdp.url}/console`);
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict', secure: false, path: '/console' });
  });

  it.each([
    ['a wrong key', 'not-the-key'],
    ["the agent's API key", AGENT],
  ])('refuses %s at sign-in: 401, still the sign-in form, no session', async (_what, key) => {
    const { pdp, context } = await setUp();
    const page = await context.newPage();
    expect(await signIn(page, pdp, key)).toBe(401);
    expect(await page.locator('body').getAttribute('data-page')).toBe('sign-in');
    await expect.poll(() => page.getByRole('alert').textContent()).toBeTruthy();
    const res = await page.request.get(`${pdp.url}/console`);
    expect(await res.text()).toContain('data-page="sign-in"');
  });

  it('shows an escalation without a reload: tool, args, agent, session, reason, latches', async () => {
    const { pdp, pep, context } = await setUp();
    const page = await context.newPage();
    await signIn(page, pdp);
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    const held = await pep.authorizeAction('refund_payment', { orderId: 'o-17', amount: 900 });
    expect(held.verdict).toBe('ESCALATE');
    const card = page.locator(`[data-escalation-id="${held.escalationId}"]`);
    await card.waitFor({ timeout: 10_000 });
    const text = await card.textContent();
    for (const part of ['refund_payment', '"orderId": "o-17"', '"amount": 900', 'support-ai', 'sess-1']) {
      expect(text).toContain(part);
    }
    expect(text).toContain('refunds over 500 need review');
    expect(text).toContain('refund-review');
    expect(navigations).toBe(0);
  });

  it('Approve: the identical call runs exactly once, and the review is a chained evidence record', async () => {
    const { pdp, pep, context } = await setUp();
    const page = await context.newPage();
    await signIn(page, pdp);
    const { runs, call } = refundTool(pep);
    const args = { orderId: 'o-18', amount: 700 };
    const first = await call(args);
    expect(first).toMatchObject({ ran: false, error: 'PolicyEscalatedError' });
    const card = page.locator(`[data-escalation-id="${first.ran ? '' : first.escalationId}"]`);
    await card.waitFor({ timeout: 10_000 });
    await card.locator('input[name=note]').fill('customer verified');
    await card.getByRole('button', { name: 'Approve' }).click();
    await card.waitFor({ state: 'detached', timeout: 10_000 });
    expect(await call({ orderId: 'o-18', amount: 701 })).toMatchObject({ ran: false }); // other args: not approved
    expect(await call(args)).toMatchObject({ ran: true, value: 'refunded' });
    expect(await call(args)).toMatchObject({ ran: false, error: 'PolicyEscalatedError' });
    expect(runs).toEqual([args]);
    const review = pdp.evidence().find((r) => r.stage === 'review');
    expect(review).toMatchObject({
      escalationId: first.ran ? '' : first.escalationId,
      outcome: 'approve',
      by: 'console',
      note: 'customer verified',
      agentId: 'support-ai',
      session: 'sess-1',
      tool: 'refund_payment',
    });
    expect(await verifyEvidence(pdp.evidence(), { keys: pdp.jwks })).toMatchObject({ ok: true });
  });

  it('Deny: the identical call is blocked and never runs', async () => {
    const { pdp, pep, context } = await setUp();
    const page = await context.newPage();
    await signIn(page, pdp);
    const { runs, call } = refundTool(pep);
    const args = { orderId: 'o-19', amount: 800 };
    const first = await call(args);
    const card = page.locator(`[data-escalation-id="${first.ran ? '' : first.escalationId}"]`);
    await card.waitFor({ timeout: 10_000 });
    await card.getByRole('button', { name: 'Deny' }).click();
    await card.waitFor({ state: 'detached', timeout: 10_000 });
    expect(await call(args)).toMatchObject({ ran: false, error: 'PolicyBlockedError' });
    expect(runs).toEqual([]);
    expect(pdp.evidence().find((r) => r.stage === 'review')).toMatchObject({ outcome: 'deny', verdict: 'BLOCK' });
  });

  it('Approve works without JavaScript: a plain form post and a redirect', async () => {
    const { pdp, pep } = await setUp();
    const context = await browser.newContext({ javaScriptEnabled: false });
    cleanups.push(() => context.close());
    const page = await context.newPage();
    await signIn(page, pdp);
    const { runs, call } = refundTool(pep);
    const args = { orderId: 'o-20', amount: 650 };
    const first = await call(args);
    await page.reload();
    const card = page.locator(`[data-escalation-id="${first.ran ? '' : first.escalationId}"]`);
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(/\/console\?done=approve/);
    expect(await card.count()).toBe(0);
    expect(await call(args)).toMatchObject({ ran: true });
    expect(runs).toHaveLength(1);
  });

  it('an approval used after approvalTtlSec grants nothing: the call is held again and never runs', async () => {
    const { pdp, pep, context } = await setUp({ approvalTtlSec: 1 });
    const page = await context.newPage();
    await signIn(page, pdp);
    const { runs, call } = refundTool(pep);
    const args = { orderId: 'o-21', amount: 990 };
    const first = await call(args);
    const card = page.locator(`[data-escalation-id="${first.ran ? '' : first.escalationId}"]`);
    await card.getByRole('button', { name: 'Approve' }).click();
    await card.waitFor({ state: 'detached', timeout: 10_000 });
    await new Promise((r) => setTimeout(r, 1500));
    expect(await call(args)).toMatchObject({ ran: false, error: 'PolicyEscalatedError' });
    expect(runs).toEqual([]);
  });

  it('an escalation left past escalationTtlSec is denied (review outcome "expired") and leaves the list', async () => {
    const { pdp, pep, context } = await setUp({ escalationTtlSec: 1 });
    const page = await context.newPage();
    await signIn(page, pdp);
    const { runs, call } = refundTool(pep);
    const args = { orderId: 'o-22', amount: 990 };
    const first = await call(args);
    const id = first.ran ? '' : (first.escalationId as string);
    await expect
      .poll(() => pdp.evidence().find((r) => r.stage === 'review' && r.escalationId === id)?.outcome, { timeout: 5000 })
      .toBe('expired');
    await page.locator(`[data-escalation-id="${id}"]`).waitFor({ state: 'detached', timeout: 10_000 });
    expect(await call(args)).toMatchObject({ ran: false, error: 'PolicyBlockedError' });
    expect(runs).toEqual([]);
  });

  it('CSRF: a form posted from another origin, and a same-origin post without the token, are refused', async () => {
    const { pdp, pep, context } = await setUp();
    const page = await context.newPage();
    await signIn(page, pdp);
    const held = await pep.authorizeAction('refund_payment', { orderId: 'o-23', amount: 900 });
    const id = held.escalationId as string;
    const evil: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<form id="f" method="post" action="${pdp.url}/console/escalations/${id}">
<input name="resolution" value="approve"><input name="csrf" value="guessed"></form>
<script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => evil.close(r)));
    const attacker = await context.newPage();
    const [posted] = await Promise.all([
      attacker.waitForResponse((r) => r.url().includes('/console/escalations/')),
      attacker.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`),
    ]);
    expect(posted.status()).toBe(403);
    const sameOrigin = await page.evaluate(async (target) => {
      const res = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: 'resolution=approve',
      });
      return res.status;
    }, `${pdp.url}/console/escalations/${id}`);
    expect(sameOrigin).toBe(403);
    await page.reload();
    expect(await page.locator(`[data-escalation-id="${id}"]`).count()).toBe(1);
    expect(pdp.evidence().some((r) => r.stage === 'review')).toBe(false);
  });

  it('HTML in the tool name, args and reason shows as text: no script runs, nothing from another origin', async () => {
    const evilTool = '<img src=x onerror=alert(1)>';
    const evilReason = '</script><script>alert(2)</script><img src="http://203.0.113.9/r.png">';
    const { pdp, pep, context } = await setUp({
      policy: {
        agents: ['support-ai'],
        latches: [{ id: 'all', stage: 'action', verdict: 'ESCALATE', reason: evilReason }],
      },
    });
    const page = await context.newPage();
    const dialogs: string[] = [];
    const foreign: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(`${pdp.url}/`)) foreign.push(r.url());
    });
    await signIn(page, pdp);
    const args = { note: '</script><svg onload=alert(3)>', '<b onmouseover=alert(4)>k</b>': 'x' };
    const evilSession = 's"><img src=x onerror=alert(5)>';
    const held = await pep.authorizeAction(evilTool, args, { session: evilSession });
    expect(held.verdict).toBe('ESCALATE');
    const card = page.locator(`[data-escalation-id="${held.escalationId}"]`);
    await card.waitFor({ timeout: 10_000 });
    const text = (await card.textContent()) ?? '';
    // the PDP decides (and shows) the normalized name: nothing of the markup survives as markup
    expect(text).toContain(normalizeToolName(evilTool));
    expect(text).toContain(evilSession);
    expect(text).toContain('</script><svg onload=alert(3)>');
    expect(text).toContain('<b onmouseover=alert(4)>k</b>');
    expect(text).toContain(evilReason);
    expect(await card.locator('img, svg, script, b').count()).toBe(0);
    await page.reload();
    await card.waitFor();
    await page.waitForTimeout(500);
    expect(dialogs).toEqual([]);
    expect(foreign).toEqual([]);
  });

  it('a reviewer approves what they saw: the whole args (scrollable, 30,000+ characters), the act_hash, and a right-to-left override shown as ⟨U+202E⟩', async () => {
    const { pdp, pep, context } = await setUp({
      policy: { agents: ['support-ai'], latches: [{ id: 'all', stage: 'action', verdict: 'ESCALATE' }] },
    });
    const page = await context.newPage();
    await signIn(page, pdp);
    const args = { body: `${'x'.repeat(30_000)}THE-END`, attachment: 'invoice\u202Efdp.exe', to: 'a\u200Bb' };
    const held = await pep.authorizeAction('send_email', args);
    const card = page.locator(`[data-escalation-id="${held.escalationId}"]`);
    await card.waitFor({ timeout: 10_000 });
    const shown = (await card.locator('pre.args').textContent()) ?? '';
    expect(shown).toContain('THE-END');
    expect(shown).toContain('invoice⟨U+202E⟩fdp.exe');
    expect(shown).toContain('a⟨U+200B⟩b');
    expect(shown).not.toMatch(/[\u202E\u200B]/);
    // the box scrolls: it is shorter than what it holds, and a reviewer can reach the end
    const box = await card.locator('pre.args').evaluate((el) => ({
      client: el.clientHeight,
      scroll: el.scrollHeight,
      overflow: (globalThis as unknown as { getComputedStyle(e: unknown): { overflowY: string } }).getComputedStyle(el)
        .overflowY,
    }));
    expect(box.scroll).toBeGreaterThan(box.client);
    expect(box.overflow).toBe('auto');
    const actHash = pdp.evidence().at(-1)?.argsHash as string;
    expect(await card.locator(`[data-act-hash="${actHash}"]`).textContent()).toBe(actHash);
  });

  it("shows the session's intent grants on a held call: the one it is inside, and a grant value's right-to-left override marked", async () => {
    const { pdp, pep, context } = await setUp({
      policy: {
        agents: ['support-ai'],
        intents: [
          {
            id: 'refund',
            pattern: '(?i)refund order (?P<order>[0-9a-z-]+)',
            grant: { tools: 'refund_payment', args: { orderId: { eq: '$order' } }, uses: 1 },
          },
        ],
        latches: [REFUND_REVIEW],
      },
    });
    const page = await context.newPage();
    await signIn(page, pdp);
    await pep.checkInput('Please refund order o-5521, it arrived broken.', {
      intent: [{ id: 'app-note', tools: 'refund_payment', args: { note: { eq: 'ok\u202Eexe' } } }],
    });
    const held = await pep.authorizeAction('refund_payment', { orderId: 'o-5521', amount: 900 });
    expect(held).toMatchObject({ verdict: 'ESCALATE', grants: ['refund'] });
    const card = page.locator(`[data-escalation-id="${held.escalationId}"]`);
    await card.waitFor({ timeout: 10_000 });
    expect(await card.locator('[data-grant-id="refund"]').getAttribute('data-grant-match')).toBe('inside');
    expect(await card.locator('[data-grant-id="app-note"]').getAttribute('data-grant-match')).toBe('arg_missing');
    const text = (await card.locator('.grants').textContent()) ?? '';
    expect(text).toContain('The call is inside refund.');
    expect(text).toContain('ok⟨U+202E⟩exe');
    expect(text).not.toMatch(/\u202E/);
  });

  it('the evidence view verifies the evidence file afresh and names a tampered record as broken', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-pep-console-'));
    const evidencePath = join(dir, 'evidence.jsonl');
    const { pdp, pep, context } = await setUp({ evidencePath });
    for (const amount of [10, 20, 30]) await pep.authorizeAction('refund_payment', { orderId: 'o', amount });
    const page = await context.newPage();
    await signIn(page, pdp);
    const status = page.locator('[data-evidence-status]');
    expect(await status.getAttribute('data-evidence-status')).toBe('ok');
    const lines = readFileSync(evidencePath, 'utf8').split('\n');
    lines[1] = (lines[1] as string).replace('"verdict":"ALLOW"', '"verdict":"BLOCK"');
    writeFileSync(evidencePath, lines.join('\n'));
    await expect.poll(() => status.getAttribute('data-evidence-status'), { timeout: 10_000 }).toBe('broken');
    expect(await status.textContent()).toContain('seq 2');
  });

  it("sends a CSP that allows only the console's own origin (no inline script), on every console answer", async () => {
    const { pdp, context } = await setUp();
    const page = await context.newPage();
    const response = await page.goto(`${pdp.url}/console`);
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toMatch(/(^|;)\s*default-src 'self'\s*(;|$)/);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toMatch(/script-src/);
    for (const path of ['/console/console.js', '/console/console.css', '/console/nothing']) {
      const res = await page.request.get(`${pdp.url}${path}`);
      expect(res.headers()['content-security-policy']).toBe(csp);
    }
  });

  it('fits a phone: no sideways scrolling at 390 px, and takes the README screenshot', async () => {
    const { pdp, pep } = await setUp();
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
    cleanups.push(() => context.close());
    const page = await context.newPage();
    await signIn(page, pdp);
    await pep.checkInput('Please refund order 5521, it arrived broken.');
    await pep.authorizeAction('lookup_order', { orderId: 'o-5521' });
    const held = await pep.authorizeAction('refund_payment', {
      orderId: 'o-5521',
      amount: 740,
      currency: 'EUR',
      reason: 'item arrived damaged',
    });
    await page.locator(`[data-escalation-id="${held.escalationId}"]`).waitFor({ timeout: 10_000 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    const wide = await browser.newContext({ viewport: { width: 900, height: 1000 } });
    cleanups.push(() => wide.close());
    const desk = await wide.newPage();
    await signIn(desk, pdp);
    const shot = join(mkdtempSync(join(tmpdir(), 'agent-pep-shot-')), 'console.png');
    await desk.screenshot({ path: shot, fullPage: false });
    if (process.env.UPDATE_SCREENSHOTS)
      copyFileSync(shot, join(import.meta.dirname, '../../../../../docs/console.png'));
  });
});

describe('without a reviewer key there is no console', () => {
  it('answers 404 at /console (console: true or not)', async () => {
    for (const options of [{}, { console: true }, { apiKey: AGENT }]) {
      const pdp = await startDevPdp({ policy: POLICY, log: false, ...options });
      const res = await fetch(`${pdp.url}/console`);
      expect(res.status).toBe(404);
      await res.arrayBuffer();
      await pdp.close();
    }
  });
});
