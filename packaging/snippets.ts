import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './workspaces';

export interface Snippet {
  /** The README it came from, relative to the repository. */
  readonly readme: string;
  /** Where the application keeps it, e.g. `src/service.ts`. */
  readonly file: string;
  readonly text: string;
}

const FENCE = /```[a-z]*\n([\s\S]*?)```/y;

/** The fenced block right after `marker` (blank lines between them allowed). */
function blockAfter(readme: string, text: string, index: number): string {
  const start = text.indexOf('```', index);
  FENCE.lastIndex = start;
  const match = FENCE.exec(text);
  if (start < 0 || !match || text.slice(index, start).trim() !== '') {
    throw new Error(`${readme}: a quick-start marker at ${index} is not followed by a code block`);
  }
  return match[1] as string;
}

/**
 * Every `<!-- quickstart-file: PATH -->` block of the READMEs: the files an application built
 * from the README consists of. The READMEs are the one source of truth; the test writes these.
 */
export function quickstartFiles(readmes: readonly string[]): Snippet[] {
  return readmes.flatMap((readme) => {
    const text = readFileSync(path.join(ROOT, readme), 'utf8');
    return [...text.matchAll(/<!-- quickstart-file: (\S+) -->/g)].map((m) => ({
      readme,
      file: m[1] as string,
      text: blockAfter(readme, text, (m.index ?? 0) + m[0].length),
    }));
  });
}

/** The code blocks after each of the README's `<!-- quickstart: NAME -->` markers, in order. */
function markedBlocks(readme: string, name: string): string[] {
  const text = readFileSync(path.join(ROOT, readme), 'utf8');
  const marker = `<!-- quickstart: ${name} -->`;
  const blocks = [...text.matchAll(new RegExp(marker, 'g'))].map((m) =>
    blockAfter(readme, text, (m.index ?? 0) + marker.length),
  );
  if (blocks.length === 0) throw new Error(`${readme} has no ${marker}`);
  return blocks;
}

/**
 * The command lines of the README's `<!-- quickstart: NAME -->` blocks, in order, comments
 * removed (a section may add its own, e.g. the packages its example installs).
 */
export function quickstartCommands(readme: string, name: 'commands' | 'run'): string[][] {
  return markedBlocks(readme, name)
    .join('\n')
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line.length > 0)
    .map((line) => line.split(/\s+/));
}

/** The sample lines of the README's `<!-- quickstart: scrape -->` block (its `$` command left out). */
export function quickstartScrape(readme: string): string[] {
  return markedBlocks(readme, 'scrape')
    .join('\n')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('$'));
}
