import { testOutboxMessage } from '../../../../test-support/outboxMessages';
import type { OutboxMessage } from '../contracts';
import * as envelope from './envelope/validate';
import { foreignRowFault, notePayloadText } from './foreignRows';

function claimed(payloadText: string): OutboxMessage {
  const payload = JSON.parse(payloadText) as Record<string, unknown>;
  return notePayloadText(testOutboxMessage({ payload }), payloadText);
}

afterEach(() => jest.restoreAllMocks());

describe('notePayloadText', () => {
  it('reads a claimed payload text with the MAYBE_INEXACT pattern once', () => {
    const test = jest.spyOn(RegExp.prototype, 'test');
    for (const text of ['{"n": 1}', '{"id": 12345678901234567891}', '{"id": 1234567890123456}']) {
      test.mockClear();
      claimed(text);
      expect(test.mock.calls.filter(([arg]) => arg === text)).toHaveLength(1);
    }
  });

  it.each([
    ['plain', '{"n": 1, "s": "1e300"}', false, null],
    [
      'an exact 16-digit integer (may be inexact: scanned, checked in full)',
      '{"id": 1234567890123456}',
      true,
      null,
    ],
    ['an integer JSON.parse changes', '{"id": 12345678901234567891}', null, 'payload: integer'],
    ['a number JSON.parse rounds to 0', '{"x": 1e-400}', null, 'payload:'],
  ] as const)('a payload text %s: same fault and same full-check decision', (_name, text, full, fault) => {
    const check = jest.spyOn(envelope, 'envelopeFault');
    const found = foreignRowFault(claimed(text));
    if (fault === null) expect(found).toBeNull();
    else expect(found).toMatch(new RegExp(`^${fault}`));
    if (full === null) expect(check).not.toHaveBeenCalled();
    else expect(check.mock.calls.map((call) => call[2])).toEqual([full]);
  });

  it('a text with more containers than the depth bound is checked in full', () => {
    const check = jest.spyOn(envelope, 'envelopeFault');
    const many = `{"a": [${Array.from({ length: 300 }, () => '[]').join(', ')}]}`;
    expect(foreignRowFault(claimed(many))).toBeNull();
    expect(check.mock.calls.map((call) => call[2])).toEqual([true]);
  });

  it('a payload that is no text (a driver that parsed it) is never marked plain nor inexact', () => {
    const check = jest.spyOn(envelope, 'envelopeFault');
    const message = notePayloadText(claimed('{"n": 1}'), { n: 1 });
    expect(foreignRowFault({ ...message })).toBeNull();
    expect(check.mock.calls.map((call) => call[2])).toEqual([true]);
  });
});
