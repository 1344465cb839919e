/**
 * The console's pages, rendered on the server as plain HTML: the sign-in form, and the console (pending
 * escalations, recent decisions, reviews, the evidence chain's status). Every value from a request goes
 * through {@link html}, so it shows as text. The stable hooks for automation are documented in
 * docs/dev-pdp.md ("The reviewer console").
 * @packageDocumentation
 */
import type { EvidenceRecord } from 'agent-pep/internal';
import type { PendingEscalation } from '../escalations.js';
import type { EvidenceStatus } from './evidence-check.js';
import { flowsBlock, grantsBlock } from './held.js';
import { html, type Part, type SafeHtml } from './html.js';
import { formatAge, pretty, visible } from './text.js';

export { formatAge, pretty, visible } from './text.js';

/** Where the console's script and styles are served. @internal */
export const ASSET_PATHS = Object.freeze({ script: '/console/console.js', style: '/console/console.css' });

/** An open escalation with the steps of its session before it. @internal */
export interface PendingView extends PendingEscalation {
  /** The session's last decisions before the escalation, newest first. */
  history: EvidenceRecord[];
}

/** Everything the console page shows. @internal */
export interface ConsoleView {
  csrf: string;
  now: number;
  pending: PendingView[];
  decisions: EvidenceRecord[];
  reviews: EvidenceRecord[];
  evidence: EvidenceStatus;
  filter: { verdict: string; session: string };
  /** One line on what the last form post did. */
  flash?: string;
}

/** The verdicts a decision filter offers. @internal */
export const VERDICT_FILTERS: readonly string[] = ['ALLOW', 'WARN', 'BLOCK', 'ESCALATE'];

function page(title: string, kind: string, csrf: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<meta name="csrf-token" content="${csrf}">
<title>${title}</title>
<link rel="stylesheet" href="${ASSET_PATHS.style}">
<script src="${ASSET_PATHS.script}" defer></script>
</head>
<body data-page="${kind}">
${body}
</body>
</html>
`.text;
}

/** The sign-in page: one password field named `key` and a button "Sign in". @internal */
export function signInPage(csrf: string, error?: string): string {
  return page(
    'Sign in: agent-pep reviewer console',
    'sign-in',
    csrf,
    html`<main class="narrow">
<h1>Reviewer console</h1>
<p>Sign in with the reviewer key of this dev PDP (not the agent's API key).</p>
${error !== undefined ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/console/sign-in" class="sign-in">
<input type="hidden" name="csrf" value="${csrf}">
<label for="key">Reviewer key</label>
<input type="password" id="key" name="key" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button>
</form>
</main>`,
  );
}

/** A plain message page (a refused or failed form post). @internal */
export function messagePage(title: string, message: string): string {
  return page(
    title,
    'message',
    '',
    html`<main class="narrow"><h1>${title}</h1><p>${message}</p><p><a href="/console">Back to the console</a></p></main>`,
  );
}

function labelList(labels: readonly string[] | undefined): Part {
  if (labels === undefined || labels.length === 0) return html`<span class="muted">none</span>`;
  return labels.map((label) => html`<span class="label">${label}</span> `);
}

function historyList(history: readonly EvidenceRecord[]): Part {
  if (history.length === 0) return html`<span class="muted">no earlier steps</span>`;
  return html`<ol class="history">${history.map(
    (r) =>
      html`<li><span class="verdict v-${r.verdict}">${r.verdict}</span> ${r.stage}${r.tool !== undefined ? html` <code>${r.tool}</code>` : ''}</li>`,
  )}</ol>`;
}

function pendingCard(p: PendingView, csrf: string, now: number): SafeHtml {
  const shown = p.args !== undefined ? pretty(p.args) : p.content !== undefined ? pretty(p.content) : '';
  const isAction = p.subject.stage === 'action';
  return html`<article class="card escalation" id="${p.id}" data-escalation-id="${p.id}">
<header><code class="tool">${visible(p.subject.tool ?? p.subject.stage)}</code> <span class="age" title="${new Date(p.openedAt).toISOString()}">${formatAge(now - p.openedAt)} ago</span></header>
<dl>
<dt>Agent</dt><dd>${visible(p.subject.agentId)}</dd>
<dt>Session</dt><dd><code>${visible(p.subject.session)}</code></dd>
<dt>Labels</dt><dd>${labelList(p.labels)}</dd>
<dt>Grants</dt><dd>${grantsBlock(p.held, isAction, now)}</dd>
${isAction ? html`<dt>Flows</dt><dd>${flowsBlock(p.held)}</dd>` : ''}
<dt>Stage</dt><dd>${p.subject.stage}</dd>
<dt>Reason</dt><dd>${visible(p.reason ?? '')}</dd>
<dt>Latches</dt><dd>${p.latches.join(', ')}</dd>
<dt>Before</dt><dd>${historyList(p.history)}</dd>
<dt>${isAction ? 'act_hash' : 'Content hash'}</dt><dd><code class="hash" data-${isAction ? 'act-hash' : 'content-hash'}="${p.subject.hash}">${p.subject.hash}</code></dd>
</dl>
<p class="what">${p.args !== undefined ? 'Args' : 'Content'}, as the PDP saw them, whole (${shown.length} characters; invisible and direction-changing characters are marked ⟨U+…⟩):</p>
<pre class="args" tabindex="0">${visible(shown)}</pre>
<form method="post" action="/console/escalations/${p.id}" class="resolve">
<input type="hidden" name="csrf" value="${csrf}">
<label>Note (optional) <input type="text" name="note" maxlength="500"></label>
<div class="buttons">
<button type="submit" name="resolution" value="approve" class="approve">Approve</button>
<button type="submit" name="resolution" value="deny" class="deny">Deny</button>
</div>
</form>
</article>`;
}

function decisionRow(r: EvidenceRecord, now: number): SafeHtml {
  const labels = (r as { labels?: string[] }).labels;
  return html`<li class="decision" data-seq="${r.seq}">
<span class="verdict v-${r.verdict}">${r.verdict}</span>
<span>${r.stage}</span>${r.tool !== undefined ? html` <code>${r.tool}</code>` : ''}
<span class="muted">${r.agentId} · <code>${r.session}</code> · ${formatAge(now - Date.parse(r.ts))} ago${r.simulated ? ' · simulated' : ''}</span>
${r.reason !== undefined ? html`<span class="reason">${r.reason}</span>` : ''}
${r.latches.length > 0 ? html`<span class="muted">[${r.latches.join(', ')}]</span>` : ''}
${labels !== undefined && labels.length > 0 ? html`<span>${labelList(labels)}</span>` : ''}
</li>`;
}

function reviewRow(r: EvidenceRecord, now: number): SafeHtml {
  const done = r.outcome === 'approve' ? 'approved' : r.outcome === 'deny' ? 'denied' : 'expired (denied)';
  return html`<li class="review" data-review-of="${r.escalationId ?? ''}">
<span class="verdict v-${r.verdict}">${done}</span> <code>${r.tool ?? r.stage}</code>
<span class="muted">${r.agentId} · <code>${r.session}</code> · by ${r.by ?? '?'} · ${formatAge(now - Date.parse(r.ts))} ago</span>
${r.note !== undefined ? html`<span class="note">“${r.note}”</span>` : ''}
</li>`;
}

function evidenceBlock(e: EvidenceStatus): SafeHtml {
  const where = e.source === 'file' ? 'the evidence file' : 'the log in memory';
  const text =
    e.status === 'ok'
      ? `Chain verified: ${e.count} record${e.count === 1 ? '' : 's'} in ${where}, each hash, link and signature intact.`
      : `Chain broken: the first broken record is seq ${e.seq} (${e.reason}), in ${where}.`;
  return html`<p id="evidence-status" class="evidence ${e.status}" data-evidence-status="${e.status}">${text}</p>`;
}

function filterForm(filter: ConsoleView['filter']): SafeHtml {
  const options = ['', ...VERDICT_FILTERS].map(
    (v) =>
      html`<option value="${v}"${v === filter.verdict ? html` selected` : ''}>${v === '' ? 'any verdict' : v}</option>`,
  );
  return html`<form method="get" action="/console" class="filter">
<label>Verdict <select name="verdict">${options}</select></label>
<label>Session <input type="text" name="session" value="${filter.session}" maxlength="200"></label>
<button type="submit">Filter</button>
</form>`;
}

/** The console page. @internal */
export function consolePage(view: ConsoleView): string {
  const { csrf, now } = view;
  return page(
    `(${view.pending.length}) agent-pep reviewer console`,
    'console',
    csrf,
    html`<header class="top">
<h1>Reviewer console</h1>
<span id="live" class="muted" role="status">${view.flash ?? ''}</span>
<form method="post" action="/console/sign-out" class="sign-out"><input type="hidden" name="csrf" value="${csrf}"><button type="submit">Sign out</button></form>
</header>
<main>
<section id="pending" aria-labelledby="pending-title">
<h2 id="pending-title">Pending escalations <span id="pending-count">${view.pending.length}</span></h2>
<div id="pending-list">${view.pending.length === 0 ? html`<p class="muted empty">Nothing waits for review.</p>` : view.pending.map((p) => pendingCard(p, csrf, now))}</div>
</section>
<section id="reviews" aria-labelledby="reviews-title">
<h2 id="reviews-title">Resolved</h2>
<div id="review-list">${view.reviews.length === 0 ? html`<p class="muted">No reviews yet.</p>` : html`<ol class="rows">${view.reviews.map((r) => reviewRow(r, now))}</ol>`}</div>
</section>
<section id="decisions" aria-labelledby="decisions-title">
<h2 id="decisions-title">Recent decisions</h2>
${filterForm(view.filter)}
<div id="decision-list">${view.decisions.length === 0 ? html`<p class="muted">No decisions${view.filter.verdict !== '' || view.filter.session !== '' ? ' match' : ' yet'}.</p>` : html`<ol class="rows">${view.decisions.map((r) => decisionRow(r, now))}</ol>`}</div>
</section>
<section id="evidence" aria-labelledby="evidence-title">
<h2 id="evidence-title">Evidence chain</h2>
<div id="evidence-block">${evidenceBlock(view.evidence)}</div>
</section>
</main>`,
  );
}
