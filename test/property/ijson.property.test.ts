/**
 * Property: hasDuplicateMemberNames finds a repeated member name in any object, at any depth, however
 * the names are escaped, and never reports one that is not there. Texts are built from a model whose
 * duplicates are known; strings are full of quotes, backslashes and non-ASCII characters.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { hasDuplicateMemberNames, ijsonProblem } from '../../src/wire/json.js';

type Name = [string, boolean];
type Node = { kind: 'obj'; members: [Name, Node][] } | { kind: 'arr'; items: Node[] } | { kind: 'str'; value: string };

const tricky = fc.string({
  unit: fc.constantFrom('a', 'b', '"', '\\', '/', '\n', 'é', '😀', ':', ',', '{', '[', 'u'),
  maxLength: 5,
});

/** A member name and whether this occurrence is written with \\u escapes (so equal names differ in text). */
const name: fc.Arbitrary<Name> = fc.tuple(tricky, fc.boolean());

const node: fc.Memo<Node> = fc.memo((depth) =>
  depth <= 1
    ? tricky.map((value) => ({ kind: 'str' as const, value }))
    : fc.oneof(
        tricky.map((value) => ({ kind: 'str' as const, value })),
        fc
          .array(fc.tuple(name, node(depth - 1)), { maxLength: 4 })
          .map((members) => ({ kind: 'obj' as const, members })),
        fc.array(node(depth - 1), { maxLength: 3 }).map((items) => ({ kind: 'arr' as const, items })),
      ),
);

/** JSON string text, sometimes with every character written as a \\u escape. */
function str(value: string, escapeAll: boolean): string {
  if (!escapeAll) return JSON.stringify(value);
  let out = '"';
  for (let i = 0; i < value.length; i++) out += `\\u${value.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return `${out}"`;
}

function render(n: Node, escapeAll: boolean): string {
  if (n.kind === 'str') return str(n.value, escapeAll);
  if (n.kind === 'arr') return `[${n.items.map((x) => render(x, escapeAll)).join(',')}]`;
  return `{${n.members.map(([[k, esc], v]) => `${str(k, escapeAll || esc)}:${render(v, escapeAll)}`).join(',')}}`;
}

function hasDup(n: Node): boolean {
  if (n.kind === 'str') return false;
  if (n.kind === 'arr') return n.items.some(hasDup);
  const names = n.members.map(([[k]]) => k);
  return new Set(names).size !== names.length || n.members.some(([, v]) => hasDup(v));
}

it('agrees with the model on every generated text', () => {
  fc.assert(
    fc.property(node(4), fc.boolean(), (n, escapeAll) => {
      const text = render(n, escapeAll);
      JSON.parse(text);
      return hasDuplicateMemberNames(text) === hasDup(n);
    }),
    { numRuns: 3000 },
  );
});

it('ijsonProblem agrees with the model on every generated text (the colon count and its fallback)', () => {
  fc.assert(
    fc.property(node(4), fc.boolean(), (n, escapeAll) => {
      const text = render(n, escapeAll);
      return ijsonProblem(text, JSON.parse(text)) === (hasDup(n) ? 'duplicate' : undefined);
    }),
    { numRuns: 3000 },
  );
});

it('the generator produces duplicates often enough to matter', () => {
  const samples = fc.sample(node(4), 2000);
  expect(samples.filter(hasDup).length).toBeGreaterThan(30);
});
