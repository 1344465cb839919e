/** docs/CONTRACT.md and docs/STYLE.md are copies of the team's shared originals; they must not drift. */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shared = `${root}../shared`;

describe.each(['CONTRACT.md', 'STYLE.md'])('docs/%s', (name) => {
  it('equals ../shared/ when the shared folder is there (it is in CI)', () => {
    const original = `${shared}/${name}`;
    if (!existsSync(original)) {
      expect(process.env.CI, 'CI must see ../shared').toBeUndefined();
      return;
    }
    expect(readFileSync(`${root}docs/${name}`, 'utf8')).toBe(readFileSync(original, 'utf8'));
  });
});
