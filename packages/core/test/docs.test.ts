import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CODES } from '@ferry/core';

describe('the package README', () => {
  it('documents every error code with its retriable flag', () => {
    const readme = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
    const undocumented = Object.entries(ERROR_CODES).filter(
      ([code, { retriable }]) => !readme.includes(`| \`${code}\` | ${retriable ? 'yes' : 'no'} |`),
    );
    expect(undocumented.map(([code]) => code)).toEqual([]);
  });
});
