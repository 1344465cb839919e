/**
 * The console's script and styles, served by the dev PDP itself from its own origin (no build step,
 * nothing from elsewhere; the CSP allows no inline script or style). The script only improves the page:
 * it polls for changes and posts approve/deny without a reload; without it, every form still works.
 * @packageDocumentation
 */

/** The console's script (plain ES2020, no dependencies). @internal */
export const CONSOLE_SCRIPT = `'use strict';
(() => {
  const POLL_MS = 2000;
  const resolved = new Set();
  const token = () => document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
  const say = (text) => {
    const live = document.getElementById('live');
    if (live) live.textContent = text;
  };
  const swap = (doc, id) => {
    const next = doc.getElementById(id);
    const current = document.getElementById(id);
    if (next && current) current.replaceWith(document.adoptNode(next));
  };
  const mergePending = (doc) => {
    const list = document.getElementById('pending-list');
    const next = doc.getElementById('pending-list');
    if (!list || !next) return;
    const fresh = [...next.querySelectorAll('[data-escalation-id]')].filter((el) => !resolved.has(el.dataset.escalationId));
    const ids = new Set(fresh.map((el) => el.dataset.escalationId));
    const current = new Map();
    for (const el of [...list.children]) {
      const id = el.dataset?.escalationId;
      if (id !== undefined && ids.has(id)) current.set(id, el);
      else el.remove();
    }
    let anchor = list.firstElementChild;
    for (const el of fresh) {
      const old = current.get(el.dataset.escalationId);
      if (old) {
        const age = old.querySelector('.age');
        const newAge = el.querySelector('.age');
        if (age && newAge) age.textContent = newAge.textContent;
        anchor = old.nextElementSibling;
      } else {
        list.insertBefore(document.adoptNode(el), anchor);
      }
    }
    if (fresh.length === 0) {
      const empty = next.querySelector('.empty');
      if (empty) list.append(document.adoptNode(empty));
    }
    const count = document.getElementById('pending-count');
    if (count) count.textContent = String(fresh.length);
  };
  let polling = false;
  const refresh = async () => {
    if (polling || document.body.dataset.page !== 'console') return;
    polling = true;
    try {
      const res = await fetch(location.pathname + location.search, {
        credentials: 'same-origin',
        cache: 'no-store',
        headers: { accept: 'text/html' },
      });
      if (!res.ok) {
        say('The console answered ' + res.status + '; retrying.');
        return;
      }
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      if (doc.body.dataset.page !== 'console') {
        location.assign('/console');
        return;
      }
      mergePending(doc);
      for (const id of ['review-list', 'decision-list', 'evidence-block']) swap(doc, id);
      document.title = doc.title;
    } catch {
      say('The PDP does not answer; retrying.');
    } finally {
      polling = false;
    }
  };
  const resolve = async (form, submitter) => {
    const card = form.closest('[data-escalation-id]');
    const body = new URLSearchParams(new FormData(form, submitter));
    const buttons = [...form.querySelectorAll('button')];
    for (const b of buttons) b.disabled = true;
    try {
      const res = await fetch(form.action, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { accept: 'application/json', 'x-csrf-token': token() },
        body,
      });
      const answer = await res.json().catch(() => ({}));
      if (!res.ok) {
        say('Not done: ' + (answer.message ?? 'the console answered ' + res.status) + '.');
        for (const b of buttons) b.disabled = false;
        return;
      }
      if (card) {
        resolved.add(card.dataset.escalationId);
        card.remove();
      }
      say((answer.resolution === 'approve' ? 'Approved ' : 'Denied ') + answer.escalationId + '.');
      await refresh();
    } catch {
      say('Not done: the PDP does not answer.');
      for (const b of buttons) b.disabled = false;
    }
  };
  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.classList.contains('resolve')) return;
    event.preventDefault();
    void resolve(form, event.submitter);
  });
  const loop = async () => {
    await refresh();
    setTimeout(loop, POLL_MS);
  };
  document.addEventListener('DOMContentLoaded', () => {
    if (document.body.dataset.page === 'console') setTimeout(loop, POLL_MS);
  });
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) void refresh();
  });
})();
`;

/** The console's styles: one column on a phone, wider cards on a desktop. @internal */
export const CONSOLE_STYLE = `*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1c1e21;background:#f4f5f7}
main{max-width:960px;margin:0 auto;padding:0 12px 32px}
main.narrow{max-width:420px;padding-top:48px}
h1{font-size:1.3rem;margin:0}
h2{font-size:1.1rem;margin:24px 0 8px}
header.top{display:flex;flex-wrap:wrap;gap:8px 16px;align-items:center;justify-content:space-between;padding:12px;background:#1f2937;color:#fff}
header.top .muted{color:#cbd5e1}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre.args{background:#0f172a;color:#e2e8f0;padding:10px;border-radius:6px;overflow:auto;max-height:60vh;white-space:pre-wrap;word-break:break-word}
mark.unseen{background:#fde047;color:#111;border-radius:3px;padding:0 2px;font-weight:600}
code.hash{word-break:break-all}
.card{background:#fff;border:1px solid #d7dbe0;border-radius:8px;padding:12px;margin:0 0 12px;box-shadow:0 1px 2px rgba(0,0,0,.04)}
.card header{display:flex;justify-content:space-between;gap:8px;flex-wrap:wrap}
.card .tool{font-size:1.05rem;font-weight:600;word-break:break-all}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:8px 0}
dt{color:#5f6b7a}
dd{margin:0;word-break:break-word;min-width:0}
.muted{color:#5f6b7a}
.label{display:inline-block;background:#eef2ff;color:#3730a3;border-radius:10px;padding:0 8px;font-size:12px}
.history{margin:0;padding-left:18px}
.grant-list,.flow-list{margin:0;padding-left:18px}
.grants-summary{margin:0 0 4px}
.inside{color:#166534}
.outside{color:#991b1b}
code.value{background:#f1f5f9;border-radius:3px;padding:0 2px}
form.resolve label{display:block;margin:8px 0}
form.resolve input[type=text]{width:100%;padding:8px;font:inherit;border:1px solid #c4c9d0;border-radius:6px}
.buttons{display:flex;gap:8px}
button{font:inherit;padding:8px 16px;border-radius:6px;border:1px solid #9aa3ad;background:#fff;cursor:pointer;min-height:40px}
button.approve{background:#15803d;border-color:#15803d;color:#fff}
button.deny{background:#b91c1c;border-color:#b91c1c;color:#fff}
button:disabled{opacity:.5}
.buttons button{flex:1}
form.filter{display:flex;flex-wrap:wrap;gap:8px;align-items:end;margin-bottom:8px}
form.filter input,form.filter select{font:inherit;padding:6px;border:1px solid #c4c9d0;border-radius:6px}
ol.rows{list-style:none;margin:0;padding:0;background:#fff;border:1px solid #d7dbe0;border-radius:8px}
ol.rows li{display:flex;flex-wrap:wrap;gap:4px 10px;padding:8px 10px;border-top:1px solid #eceef1;word-break:break-word}
ol.rows li:first-child{border-top:0}
.verdict{font-weight:600;font-size:12px;padding:1px 6px;border-radius:4px;background:#e5e7eb}
.v-ALLOW{background:#dcfce7;color:#166534}.v-WARN{background:#fef9c3;color:#854d0e}
.v-BLOCK{background:#fee2e2;color:#991b1b}.v-ESCALATE{background:#e0e7ff;color:#3730a3}
.evidence{padding:10px 12px;border-radius:8px;margin:0}
.evidence.ok{background:#dcfce7;color:#166534}.evidence.broken{background:#fee2e2;color:#991b1b;font-weight:600}
.error{background:#fee2e2;color:#991b1b;padding:8px 10px;border-radius:6px}
form.sign-in{display:flex;flex-direction:column;gap:8px}
form.sign-in input{font:inherit;padding:10px;border:1px solid #c4c9d0;border-radius:6px}
form.sign-out button{background:transparent;color:#fff;border-color:#64748b;min-height:32px;padding:4px 12px}
@media (min-width:720px){.card dl{grid-template-columns:110px 1fr}}
`;
