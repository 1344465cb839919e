/**
 * Text in the console's pages: what a reviewer could not see as it is (invisible and direction-changing
 * characters) made visible, ages in words, JSON indented. Every value still goes through {@link html}.
 * @packageDocumentation
 */
import { html, type Part } from './html.js';

/**
 * Characters a reviewer could not see as they are: C0 and C1 controls (but the newline and tab of
 * indented JSON), bidirectional embeddings, overrides, isolates and marks (U+202E turns text around),
 * zero-width and other invisible characters, variation selectors, the BOM and the tag characters.
 */
const UNSEEN =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: each code point is matched alone on purpose: joiners and variation selectors are what a reviewer cannot see
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u2028-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF9-\uFFFB\u{E0000}-\u{E007F}\u{1D173}-\u{1D17A}]/gu;

/** "12 s", "3 min", "2 h", "4 d". @internal */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}

/** JSON, indented, whole (the page scrolls it): a reviewer approves what they saw, all of it. @internal */
export function pretty(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Text from an agent with every character of {@link UNSEEN} replaced by a visible marker, `⟨U+202E⟩`,
 * in a `mark.unseen` element; the rest is text (escaped by {@link html}), never HTML. @internal
 */
export function visible(text: string): Part {
  const parts: Part[] = [];
  let last = 0;
  for (const m of text.matchAll(UNSEEN)) {
    const code = (m[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0');
    parts.push(
      text.slice(last, m.index),
      html`<mark class="unseen" title="an invisible or direction-changing character">⟨U+${code}⟩</mark>`,
    );
    last = m.index + m[0].length;
  }
  parts.push(text.slice(last));
  return parts;
}
