/**
 * The session of a held call, as the console shows it (docs/dev-pdp.md, "The reviewer console"): its
 * intent grants when the request was held (tools, constraints, uses left, expiry, and whether the call is
 * inside each or why not) and the values in the args the session saw, by kind and origin. Grant values are
 * the user's text: each goes through {@link visible}, so markup shows as text and an invisible or
 * direction-changing character is marked.
 * @packageDocumentation
 */
import type { GrantMatch, HeldGrant, HeldSession } from '../held-session.js';
import type { StoredConstraint } from '../sessions/state.js';
import { html, type Part, type SafeHtml } from './html.js';
import { formatAge, visible } from './text.js';

/** Why a call is not inside a grant, in words (a path is added for the argument reasons). */
const WHY: Readonly<Record<Exclude<GrantMatch, 'inside'>, string>> = {
  expired: 'expired',
  used_up: 'no uses left',
  other_tool: 'the tool is not among its tools',
  arg_missing: 'absent from the args: ',
  arg_outside: 'outside the constraint: ',
};

/** A grant id as the policy and the application may write one: only such an id goes into an attribute. */
const GRANT_ID = /^[A-Za-z0-9_.:-]{1,64}$/;

const BOUNDS: Readonly<Record<string, string>> = { lte: '≤', gte: '≥', lt: '<', gt: '>' };

/** A JSON scalar as written in the policy (a string quoted), marked where it hides characters. */
function scalar(value: unknown): Part {
  return html`<code class="value">${visible(JSON.stringify(value) ?? String(value))}</code>`;
}

function constraintText(c: StoredConstraint): Part {
  if ('eq' in c) return html`= ${scalar(c.eq)}`;
  if ('in' in c) return html`one of ${c.in.map((v, i) => html`${i > 0 ? ', ' : ''}${scalar(v)}`)}`;
  if ('matches' in c) return html`matches <code class="value">${visible(c.matches)}</code>`;
  if ('fromUser' in c) return html`in the user's own words`;
  const [op, n] = Object.entries(c)[0] as [string, number];
  return html`${BOUNDS[op] ?? op} ${scalar(n)}`;
}

function constraints(args: HeldGrant['args']): Part {
  const entries = Object.entries(args);
  if (entries.length === 0) return html`<span class="muted">any args</span>`;
  return entries.map(
    ([path, c], i) => html`${i > 0 ? '; ' : ''}<code>args.${visible(path)}</code> ${constraintText(c)}`,
  );
}

function expiry(expiresAt: number | undefined, now: number): Part {
  if (expiresAt === undefined) return 'lives with the session';
  const at = new Date(expiresAt).toISOString();
  if (expiresAt <= now) return html`<span title="${at}">expired</span>`;
  return html`<span title="${at}">expires in ${formatAge(expiresAt - now)}</span>`;
}

function matchText(g: HeldGrant): Part {
  if (g.match === undefined) return '';
  if (g.match === 'inside') return html` · <strong class="inside">the call is inside it</strong>`;
  const path = g.failedPath !== undefined ? html`<code>args.${visible(g.failedPath)}</code>` : '';
  return html` · <span class="outside">not inside: ${WHY[g.match]}${path}</span>`;
}

function grantItem(g: HeldGrant, now: number): SafeHtml {
  return html`<li class="grant" data-grant-id="${GRANT_ID.test(g.id) ? g.id : ''}" data-grant-match="${g.match ?? ''}">
<code class="grant-id">${visible(g.id)}</code>: ${g.tools.map((t, i) => html`${i > 0 ? ', ' : ''}<code>${visible(t)}</code>`)};
${constraints(g.args)} · ${g.uses === undefined ? 'unlimited uses' : `${g.uses} use${g.uses === 1 ? '' : 's'} left`} · ${expiry(g.expiresAt, now)}${matchText(g)}${g.shortened ? html` <span class="muted">(shortened)</span>` : ''}
</li>`;
}

/** The summary line: which grant the call is inside, or that it is inside none. */
function summary(held: HeldSession, isAction: boolean): Part {
  if (!isAction) return '';
  const inside = held.grants.filter((g) => g.match === 'inside');
  if (inside.length === 0) return html`<p class="grants-summary">The call is inside none of the session's grants.</p>`;
  return html`<p class="grants-summary">The call is inside ${inside.map((g, i) => html`${i > 0 ? ', ' : ''}<code>${visible(g.id)}</code>`)}.</p>`;
}

/** The session's grants when the request was held; "no grants" when it had none. @internal */
export function grantsBlock(held: HeldSession | undefined, isAction: boolean, now: number): SafeHtml {
  if (held === undefined || held.grants.length === 0) {
    return html`<div class="grants" data-grants="0"><span class="muted">no grants</span></div>`;
  }
  const more = held.grantsLeftOut ?? 0;
  return html`<div class="grants" data-grants="${held.grants.length + more}">
${summary(held, isAction)}<ul class="grant-list">${held.grants.map((g) => grantItem(g, now))}</ul>
${more > 0 ? html`<p class="muted">${more} more not shown.</p>` : ''}</div>`;
}

/** The values in the args the session saw, with where it saw them; never a value or its hash. @internal */
export function flowsBlock(held: HeldSession | undefined): SafeHtml {
  const origin =
    held?.origin !== undefined ? html`<p>The called tool's origin: <code>${visible(held.origin)}</code>.</p>` : '';
  if (held === undefined || held.flows.length === 0) {
    return html`<div class="flows" data-flows="0">${origin}<span class="muted">no value in the args was seen earlier in the session</span></div>`;
  }
  return html`<div class="flows" data-flows="${held.flows.length}">${origin}<ul class="flow-list">${held.flows.map(
    (f) =>
      html`<li class="flow"><code>args.${visible(f.path)}</code> carries ${visible(f.kind)} seen in ${f.sources.map(
        (s, i) =>
          html`${i > 0 ? ', ' : ''}${s.tool === 'user' ? "the user's input" : html`<code>${visible(s.tool || '(unnamed tool)')}</code>`} <span class="muted">(origin <code>${visible(s.origin)}</code>${s.groups.length > 0 ? html`; ${s.groups.map((g) => html`@${visible(g)} `)}` : ''})</span>`,
      )}</li>`,
  )}</ul></div>`;
}
