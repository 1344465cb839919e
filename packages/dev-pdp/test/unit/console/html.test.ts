import { describe, expect, it } from 'vitest';
import { escapeHtml, html, raw } from '../../../src/console/html.js';

describe('escapeHtml', () => {
  it('escapes every character that could open markup or leave an attribute', () => {
    expect(escapeHtml(`<img src=x onerror="alert('1')">&\``)).toBe(
      '&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;&#96;',
    );
  });

  it('turns a lone surrogate into U+FFFD', () => {
    expect(escapeHtml('a\uD800b')).toBe('a\uFFFDb');
  });
});

describe('html`...`', () => {
  it('escapes every value, in text and in attributes, and keeps the literal parts', () => {
    const tool = '</script><script>alert(1)</script>';
    const id = '" onmouseover="alert(2)';
    expect(html`<p data-id="${id}">${tool}</p>`.text).toBe(
      '<p data-id="&quot; onmouseover=&quot;alert(2)">&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</p>',
    );
  });

  it('nests templates without escaping them twice, escapes lists item by item, and drops nothing-values', () => {
    const items = ['<a>', html`<b>${'<c>'}</b>`];
    expect(html`<i>${items}${undefined}${null}${false}${0}</i>`.text).toBe('<i>&lt;a&gt;<b>&lt;c&gt;</b>0</i>');
  });

  it('raw() is the only way to put markup in unescaped', () => {
    expect(html`${raw('<br>')}${'<br>'}`.text).toBe('<br>&lt;br&gt;');
  });
});
