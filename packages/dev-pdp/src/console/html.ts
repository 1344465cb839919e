/**
 * HTML as text: every value put into the console's pages is escaped here, so a tool name, an arg, a
 * reason or a label from an agent shows as text and never becomes markup (docs/dev-pdp.md, "The
 * reviewer console").
 * @packageDocumentation
 */

/** A piece of markup that is already safe: made only by {@link html} or {@link raw}. @internal */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/**
 * Escapes text for an HTML text node or a quoted attribute value: `& < > " ' \``; lone surrogates
 * become U+FFFD (they cannot be encoded).
 * @internal
 */
export function escapeHtml(value: string): string {
  return value.toWellFormed().replace(/[&<>"'`]/g, (c) => ESCAPES[c] as string);
}

/** A value a template may hold: text (escaped), safe markup, a list of either, or nothing. @internal */
export type Part = string | number | SafeHtml | readonly Part[] | undefined | null | false;

function render(part: Part): string {
  if (part === undefined || part === null || part === false) return '';
  if (part instanceof SafeHtml) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/**
 * The tag of every template: literal parts stay as written, every value is escaped (unless it is
 * already {@link SafeHtml}). Attribute values must be written in double quotes.
 * @example
 * ```ts
 * html`<td>${tool}</td>`; // a tool named <img onerror=...> shows as text
 * ```
 * @internal
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/** Markup written by the console itself (never a value from a request). @internal */
export function raw(text: string): SafeHtml {
  return new SafeHtml(text);
}
