/**
 * The README documents every export of `@ferry/testing` and `@ferry/testing/conformance`, and its
 * example is a test of this package: the block after `<!-- example: PATH -->` is PATH's text.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');

/** The names an entry point exports (values and types), from its `export { ... } from` lists. */
function exportedNames(entry: string): string[] {
  const source = readFileSync(path.join(root, entry), 'utf8');
  return [...source.matchAll(/export (?:type )?\{([^}]*)\}/g)].flatMap((match) =>
    (match[1] as string)
      .split(',')
      .map((name) =>
        name
          .replace(/^\s*type\s+/, '')
          .replace(/^.*\sas\s+/, '')
          .trim(),
      )
      .filter((name) => name.length > 0),
  );
}

describe('the @ferry/testing README', () => {
  it.each(['src/index.ts', 'src/conformance/index.ts'])('names every export of %s', (entry) => {
    const names = exportedNames(entry);
    expect(names.length).toBeGreaterThan(5);
    expect(names.filter((name) => !new RegExp(`\`${name}\\b`).test(readme))).toEqual([]);
  });

  it('shows examples that are tests of this package, word for word', () => {
    const examples = [...readme.matchAll(/<!-- example: (\S+) -->\s*```ts\n([\s\S]*?)```/g)];
    expect(examples.map((m) => m[1])).toEqual(['test/readmeExample.test.ts']);
    for (const [, file, text] of examples) {
      expect(text).toBe(readFileSync(path.join(root, file as string), 'utf8'));
    }
  });
});
