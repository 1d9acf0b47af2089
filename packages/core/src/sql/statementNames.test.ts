import { ferryStatementNames, preparedLost, preparedName } from './statementNames';

describe('statement names after a loss (SQLSTATE 26000)', () => {
  it('renames every text once per loss, and runs them unnamed after three losses', () => {
    const claim = 'SELECT $1::int AS names_claim';
    const other = 'SELECT $1::int AS names_other';
    const first = preparedName(claim)!;
    const otherFirst = preparedName(other)!;
    expect(first).toMatch(/^ferry_[0-9a-f]{24}$/);

    preparedLost(first);
    const second = preparedName(claim)!;
    expect(second).toBe(`${first}_g1`);
    expect(preparedName(other)).toBe(`${otherFirst}_g1`);
    expect(ferryStatementNames({ sql: claim, args: [1] })).toBe(second);

    // A concurrent statement that met the same loss under the old name renames nothing more.
    preparedLost(otherFirst);
    expect(preparedName(claim)).toBe(second);

    preparedLost(second);
    preparedLost(preparedName(other)!);
    expect(preparedName(claim)).toBe(`${first}_g3`);
    preparedLost(preparedName(claim)!);
    expect(preparedName(claim)).toBeUndefined();
    expect(ferryStatementNames({ sql: claim, args: [1] })).toBe('');
  });
});
