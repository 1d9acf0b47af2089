import { UnansweredLedger } from './unanswered';

describe('UnansweredLedger', () => {
  it('charges a message unanswered again only after the broker answered others since its last try', () => {
    const ledger = new UnansweredLedger();
    expect(ledger.unansweredAgain('big')).toBe(false);
    // Silent broker: nothing answered in between, never charged.
    expect(ledger.unansweredAgain('big')).toBe(false);
    ledger.answered(['small']);
    expect(ledger.unansweredAgain('big')).toBe(true);
    expect(ledger.unansweredAgain('big')).toBe(false);
  });

  it('knows which messages went unanswered until a request carrying them is answered', () => {
    const ledger = new UnansweredLedger();
    expect(ledger.wasUnanswered('m')).toBe(false);
    ledger.unansweredAgain('m');
    expect(ledger.wasUnanswered('m')).toBe(true);
    ledger.answered(['m']);
    expect(ledger.wasUnanswered('m')).toBe(false);
  });

  it('forgets a message once a request carrying it was answered', () => {
    const ledger = new UnansweredLedger();
    ledger.unansweredAgain('m');
    ledger.answered(['m']);
    ledger.answered(['other']);
    expect(ledger.unansweredAgain('m')).toBe(false);
  });

  it('keeps at most `kept` messages, dropping the oldest', () => {
    const ledger = new UnansweredLedger(2);
    ledger.unansweredAgain('a');
    ledger.unansweredAgain('b');
    ledger.unansweredAgain('c');
    ledger.answered([]);
    expect(ledger.unansweredAgain('a')).toBe(false);
    expect(ledger.unansweredAgain('c')).toBe(true);
  });
});
