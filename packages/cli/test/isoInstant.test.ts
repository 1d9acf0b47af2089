/**
 * The instant `--before` / `--since` mean, field by field (review 65): every RFC 3339 / ISO 8601
 * extended form and PostgreSQL's own timestamptz output is taken at the instant PostgreSQL reads
 * it; fraction digits beyond the millisecond are truncated; anything off the calendar or the clock
 * is refused.
 */
import { instant } from '../src/parse';

describe('instant(): the instant of an ISO timestamp', () => {
  it.each([
    ['2026-03-01', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01T12:00:00Z', '2026-03-01T12:00:00.000Z'],
    ['2026-03-01t12:00:00z', '2026-03-01T12:00:00.000Z'],
    ['2026-03-01T12:00:00+01', '2026-03-01T11:00:00.000Z'],
    ['2026-03-01T12:00:00+0100', '2026-03-01T11:00:00.000Z'],
    ['2026-03-01T12:00:00-01:30', '2026-03-01T13:30:00.000Z'],
    ['2026-03-01T12:00+05:30', '2026-03-01T06:30:00.000Z'],
    ['0001-01-01 00:53:28+00:53:28', '0001-01-01T00:00:00.000Z'],
    ['2026-03-01 12:00:00.123456+00', '2026-03-01T12:00:00.123Z'],
    ['2026-03-01T12:00:00.5Z', '2026-03-01T12:00:00.500Z'],
    ['2026-03-01T23:59:59.9999999999Z', '2026-03-01T23:59:59.999Z'],
    ['2024-02-29T23:59:59.999Z', '2024-02-29T23:59:59.999Z'],
  ])('%s is %s', (value, iso) => {
    expect(instant(value).toISOString()).toBe(iso);
  });

  it('a time without an offset is local time, as JavaScript reads it', () => {
    expect(instant('2026-03-01T12:00:01.25').getTime()).toBe(new Date(2026, 2, 1, 12, 0, 1, 250).getTime());
    expect(instant('2026-03-01 12:00').getTime()).toBe(new Date(2026, 2, 1, 12, 0).getTime());
  });

  it.each([
    '2026-02-30',
    '2026-04-31T00:00:00Z',
    '2026-13-01',
    '2026-03-01T24:00:00Z',
    '2026-03-01T23:60Z',
    '2026-03-01T23:59:60Z',
    '2026-03-01T12:00:00+24',
    '2026-03-01T12:00:00+01:60',
    '2026-03-01T12:00:00+1',
    '2026-03-01T12:00:00+01:',
    '2026-03-01T12:00:00.Z',
    '2026-03-01T12Z',
    '2026-W09-1',
    '2026-060',
    '20260301',
    ' 2026-03-01',
    '2026-03-01 ',
    '2026-03-01T12:00:00 Z',
    '2026-03-01T12:00:00 +01',
    '2026-03-01  12:00',
    '2026-03-01+01',
    '0000-12-31T23:59:59Z',
  ])('%j is refused', (value) => {
    expect(() => instant(value)).toThrow('must be an ISO timestamp');
  });
});
