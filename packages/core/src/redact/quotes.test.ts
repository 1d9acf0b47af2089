import { createRedactor, redactText } from './redact';

/** `value` as JSON embedded in a JSON string `levels` times (1: {\"password\":\"…\"}). */
function embedded(value: unknown, levels: number): string {
  let text = JSON.stringify(value);
  for (let i = 0; i < levels; i += 1) text = JSON.stringify(text).slice(1, -1);
  return text;
}

describe('quoted secret values, whatever the quotes', () => {
  it.each([
    ['a newline inside double quotes', 'password="abc\ndef" next=1', 'password="[redacted]" next=1'],
    ['lines inside single quotes', "secret: 'l1\r\nl2\nl3' ok", "secret: '[redacted]' ok"],
    [
      'a newline in escaped JSON',
      '{\\"token\\":\\"ab\ncd\\",\\"user\\":1}',
      '{\\"token\\":\\"[redacted]\\",\\"user\\":1}',
    ],
    ['typographic double quotes', 'password: “correct horse” next', 'password: “[redacted]” next'],
    ['typographic single quotes', 'password is ‘correct horse’ next', 'password is ‘[redacted]’ next'],
    [
      'an apostrophe inside typographic single quotes',
      'password: ‘it’s horse’ next',
      'password: ‘[redacted]’ next',
    ],
    [
      'low-high quotes',
      'Passwort „geheim wort“ password=„geheim wort“ x',
      'Passwort „geheim wort“ password=„[redacted]“ x',
    ],
    ['guillemets', 'password=«mot secret» x', 'password=«[redacted]» x'],
    [
      'typographic quotes round the key',
      '“password”: “correct horse”, “user”: “bob”',
      '“password”: “[redacted]”, “user”: “bob”',
    ],
    ['an apostrophe inside single quotes', "password: 'it's a secret' ok", "password: '[redacted]' ok"],
    ['a Python dict', "{'password': 'it's x', 'user': 'bob'}", "{'password': '[redacted]', 'user': 'bob'}"],
    ['an escaped quote inside single quotes', "password='a\\'b c' ok", "password='[redacted]' ok"],
    ['backticks', 'password=`correct horse` next', 'password=`[redacted]` next'],
    ['SQL doubled quotes', "password='it''s-secret' next", "password='[redacted]' next"],
    ['SQL doubled quotes twice', "SET password = 'a''b''c d' WHERE x", "SET password = '[redacted]' WHERE x"],
    ['an empty SQL value before another', "password='' user='bob'", "password='[redacted]' user='bob'"],
  ])('redacts the whole value: %s', (_shape, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });

  it('redacts a quoted value that never closes to the end of the text, every line of it', () => {
    expect(redactText('token: "open ended\nnext line')).toBe('token: "[redacted]');
    expect(redactText('password=“abc\ndef')).toBe('password=“[redacted]');
  });

  it.each([1, 2, 3, 4])('redacts JSON embedded in JSON strings %i level(s) deep', (levels) => {
    const text = embedded({ password: 's3cret', user: 'bob', token: 'say "Q7hi" \\ Z9ok' }, levels);
    const redacted = redactText(`body: ${text} end`);
    expect(redacted).not.toMatch(/s3cret|Q7hi|Z9ok/);
    expect(redacted).toContain('bob');
    expect(redacted).toMatch(/ end$/);
  });

  it("keeps an allowed key's value in the new quotes, and redacts the secrets inside it", () => {
    const redact = createRedactor({ allow: ['token'] });
    expect(redact('token=`page 2` password=`x y`')).toBe('token=`page 2` password=`[redacted]`');
    expect(redact('token: “a password: b” c')).toBe('token: “a password: [redacted]” c');
    // Quoted values inside allowed ones are read 4 levels deep; the fifth is redacted.
    expect(redact('token="a token=\'b token=`c token=“d token=‘e-5’”`\'"')).toBe(
      'token="a token=\'b token=`c token=“d token=‘[redacted]’”`\'"',
    );
  });
});

describe('AWS access key ids without a key name', () => {
  it.each([
    ['AKIAIOSFODNN7EXAMPLE rejected', '[redacted-aws-key] rejected'],
    ['signed by ASIAY34FZKBOKMUTVV7A: expired', 'signed by [redacted-aws-key]: expired'],
    ['Credential=AKIAIOSFODNN7EXAMPLE/20261202/us-east-1/sqs/aws4_request', 'Credential=[redacted]'],
    ['key (AKIAIOSFODNN7EXAMPLE) x', 'key ([redacted-aws-key]) x'],
  ])('redacts the key id in %j', (text, expected) => {
    expect(redactText(text)).toBe(expected);
  });

  it.each([
    'message 3f2c9a1e-8b7d-4c6e-9f0a-1b2c3d4e5f60 sent',
    'MessageId AKIAIOSFODNN7EXAMPLEX1 is too long to be a key id',
    'id xAKIAIOSFODNN7EXAMPLE glued to a word',
    'ASIA region AKIA 1234',
  ])('keeps %j', (text) => {
    expect(redactText(text)).toBe(text);
  });
});
