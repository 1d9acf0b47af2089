import { FerryError } from '../errors';
import { createRedactor, describeError, redactText } from './redact';

describe('redaction of error text', () => {
  it.each([
    ['password is hunter2', 'hunter2'],
    ['the password was hunter2, retry', 'hunter2'],
    ['db_password: "hunter2"', 'hunter2'],
    ['set secret to s3cr3t-value', 's3cr3t-value'],
    ['card 4111 1111 1111 1111 declined', '4111 1111 1111 1111'],
    ['card 4111-1111-1111-1111 declined', '4111-1111-1111-1111'],
    ['pan 4111111111111111', '4111111111111111'],
    ['call +1 (555) 123-4567 now', '555) 123-4567'],
    ['phone 030 1234567', '030 1234567'],
    ['sms to +447700900123 failed', '447700900123'],
    ['jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-nature_x', 'eyJhbGciOiJIUzI1NiJ9'],
    ['postgres://app:pw@db/x', 'pw@'],
    ['connect to postgres://:s3cr3t@db/prod failed', 's3cr3t'],
    ['connect to postgres://app:s3@cr3t@db/prod failed', 'cr3t'],
    ['DATABASE_URL=postgresql://app:p@ss:w@rd@db:5432/prod', ':w@rd'],
    ['mail bob@example.com', 'bob@example.com'],
  ])('removes the secret from %j', (text, secret) => {
    expect(redactText(text)).not.toContain(secret);
  });

  it.each([
    // escaped JSON: a JSON body quoted in a JSON string or an error message
    [JSON.stringify(JSON.stringify({ password: 'hunter2', token: 'tok123' })), /hunter2|tok123/],
    // quoted values with spaces (passphrases)
    ['{"password":"correct horse battery staple"}', /horse|battery|staple/],
    ["password: 'correct horse battery staple'", /horse|battery|staple/],
    ['the password is "correct horse battery staple"', /horse|battery|staple/],
    // Authorization schemes other than Bearer / Basic: the rest of the header value
    ['Authorization: Token ghp_SECRETabcdef0123', /ghp_SECRET/],
    ['authorization: ApiKey SECRETKEY123==', /SECRETKEY123/],
    [
      'Authorization: Digest username="bob", nonce="n1", response="6629fae49393a05397450978507c4ef1"',
      /6629fae4/,
    ],
    // URL passwords with an unencoded / ? #
    ['connect postgres://app:ab/cd@db:5432/x failed', /ab\/cd/],
    ['connect postgres://app:ab?cd@db:5432/x failed', /ab\?cd/],
    ['connect postgres://app:ab#cd@db:5432/x failed', /ab#cd/],
    // PEM private keys
    [
      'bad key -----BEGIN PRIVATE KEY----- MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7 -----END PRIVATE KEY----- x',
      /MIIEvQIBADAN/,
    ],
    ['bad key -----BEGIN RSA PRIVATE KEY----- MIIEvQIBADANBgkqhkiG9w0BAQEF', /MIIEvQIBADAN/],
  ])('removes the secret from %j (other notations)', (text, secret) => {
    expect(redactText(text)).not.toMatch(secret);
  });

  it('redacts a quoted value whole however long it is, or to the end of the text when it does not close', () => {
    const passphrase = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    for (const text of [
      `password="${passphrase}" next=1`,
      `passphrase: '${passphrase}' ok`,
      `{"apiKey": "${passphrase}"}`,
      `secret="${'a b '.repeat(100)}"`,
      // another quote or an escape inside, or a text cut before the closing quote
      `password: "it's ${passphrase}"`,
      `password="a\\b ${passphrase}"`,
      `token: "${passphrase}`,
      `<password>${passphrase}</password>`,
      `Authorization: Digest username="bob", response="${passphrase}"`,
    ]) {
      const redacted = redactText(text);
      expect(redacted).toContain('[redacted]');
      expect(redacted).not.toMatch(/word\d|a b a b/);
    }
    // A closed quoted value leaves the rest of the line; an unclosed one may go on over lines
    // (quotes.test.ts): it is redacted to the end of the text.
    expect(redactText(`password="${passphrase}" next=1`)).toBe('password="[redacted]" next=1');
    expect(redactText(`token: "open ended\nnext line`)).toBe('token: "[redacted]');
  });

  it('redacts a card number glued to a word or a dash when it passes the Luhn check', () => {
    for (const text of ['pan_4111111111111111', 'card-4111111111111111', 'card4111111111111111']) {
      expect(redactText(`declined ${text}`)).not.toContain('4111111111111111');
    }
    expect(redactText('declined pan_5555555555554444;')).toBe('declined pan_[redacted-card];');
    // A timestamp or an id glued to its name is not a card number.
    expect(redactText('ts-1733140800000 id_1733140800001 v1.2.3')).toBe(
      'ts-1733140800000 id_1733140800001 v1.2.3',
    );
  });

  it('redacts the text of an XML element named by a sensitive key', () => {
    expect(redactText('SOAP fault: <password>hunter2</password> <user>bob</user>')).toBe(
      'SOAP fault: <password>[redacted]</password> <user>bob</user>',
    );
    expect(redactText('<ns:ApiKey>k 1</ns:ApiKey>')).toBe('<ns:ApiKey>[redacted]</ns:ApiKey>');
    expect(
      createRedactor({ allow: ['token'] })('<token>page-2</token><refresh_token>x</refresh_token>'),
    ).toBe('<token>page-2</token><refresh_token>[redacted]</refresh_token>');
  });

  it('keeps the text around the new shapes', () => {
    expect(redactText('{"password":"a b c","user":"bob"}')).toBe('{"password":"[redacted]","user":"bob"}');
    expect(redactText('{\\"password\\":\\"hunter2\\",\\"user\\":1}')).toBe(
      '{\\"password\\":\\"[redacted]\\",\\"user\\":1}',
    );
    expect(redactText('Authorization: Token abc123; retry')).toBe('Authorization: [redacted]; retry');
    expect(redactText('connect postgres://app:ab/cd@db:5432/x failed')).toBe(
      'connect postgres://[redacted]@db:5432/x failed',
    );
    expect(redactText('GET http://host:8080/path?next=a@b.example.com')).toBe(
      'GET http://host:8080/path?next=[redacted-email]',
    );
    expect(
      redactText('key -----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY----- rejected'),
    ).toBe('key [redacted-private-key] rejected');
  });

  it.each([
    'connect ECONNREFUSED 127.0.0.1:5432',
    'inbox receipt 12345678-1234-1234-1234-123456789012: claim lost before completion',
    'payload is 300000 bytes; the limit is 262144',
    'lease expired at 2026-12-01T04:13:12.000Z (2026-12-01)',
    'timeout after 10000ms on attempt 3 of 8',
  ])('keeps operational detail in %j', (text) => {
    expect(redactText(text)).toBe(text);
  });

  it('stores the name, the code and the redacted message, bounded', () => {
    const error = Object.assign(new Error('password is hunter2'), { code: 'E_AUTH' });
    expect(describeError(error)).toBe('Error [E_AUTH]: password is [redacted]');
    expect(describeError(new FerryError('FERRY_TIMEOUT', 'call 555 123 4567'))).toBe(
      'FerryError [FERRY_TIMEOUT]: call [redacted-phone]',
    );
    const smuggled = Object.assign(new Error('x'), { code: 'hunter2 4111 1111 1111 1111' });
    expect(describeError(smuggled)).toBe('Error: x');
    expect(describeError(new Error('x'.repeat(5000)), 100)).toHaveLength(100);
  });

  it('drops a name or a code that the rules would redact (a secret shaped like an identifier)', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';
    expect(describeError(Object.assign(new Error('rejected'), { code: jwt }))).toBe('Error: rejected');
    expect(describeError(Object.assign(new Error('rejected'), { name: 'password:hunter2' }))).toBe(
      'Error: rejected',
    );
    const pin = createRedactor({ keys: ['pin'] });
    expect(describeError(Object.assign(new Error('x'), { code: 'pin=8F3K2Q' }), undefined, pin)).toBe(
      'Error: x',
    );
    expect(describeError(Object.assign(new Error('x'), { name: 'TypeError', code: 'ECONNRESET' }))).toBe(
      'TypeError [ECONNRESET]: x',
    );
  });

  it('an allow pattern with the sticky flag y keeps what it matches anywhere in the text', () => {
    const text = 'refused: order 9000000000001';
    expect(createRedactor({ allow: [/order 9\d{12}/y] })(text)).toBe(text);
  });

  it('keeps what the allow-list names: a sensitive key by name, any text by pattern', () => {
    const redact = createRedactor({ allow: ['token', /order 4\d{15}/] });
    expect(redact('token: page-2 password: hunter2')).toBe('token: page-2 password: [redacted]');
    expect(redact('order 4111111111111111 failed, card 4111111111111111')).toBe(
      'order 4111111111111111 failed, card [redacted-card]',
    );
    expect(describeError(new Error('token: page-2'), undefined, redact)).toBe('Error: token: page-2');
  });

  it('an allowed key name keeps only that exact key (any case), not the longer names holding it', () => {
    const redact = createRedactor({ allow: ['token'] });
    expect(redact('page token: cursor-2; refresh_token=RT_SECRET x-amz-security-token:ST_SECRET')).toBe(
      'page token: cursor-2; refresh_token=[redacted] x-amz-security-token:[redacted]',
    );
    expect(redact('Token=page-3 TOKEN: page-4')).toBe('Token=page-3 TOKEN: page-4');
    expect(createRedactor({ allow: ['password'] })('db_password=hunter2 password=hunter3')).toBe(
      'db_password=[redacted] password=hunter3',
    );
    expect(createRedactor({ allow: ['api_key'] })('api_key=k1 apikey=k2')).toBe(
      'api_key=k1 apikey=[redacted]',
    );
  });

  it('refuses at configuration an allow pattern its check cannot vouch for, saying why', () => {
    for (const pattern of [/^(a+)+$/, /(\w+\s?)*$/, /(?<=order )\d{13}/]) {
      expect(() => createRedactor({ allow: [pattern] })).toThrow(
        expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'redact.allow' }),
      );
    }
    expect(() => createRedactor({ allow: [/(?<=order )\d{13}/] })).toThrow(/lookbehind: write \/order/);
    expect(createRedactor({ allow: [/\p{Lu}{3}-\d+/u] })('ref ABC-4111111111111111')).toBe(
      'ref ABC-4111111111111111',
    );
  });

  it('keeps a URL scheme and host, and takes only the credentials, wherever the URL stands', () => {
    expect(redactText('x1.amqp://u:pw@h 1redis://:pw@h (postgres://a:b@db/x)')).toBe(
      'x1.amqp://[redacted]@h 1redis://[redacted]@h (postgres://[redacted]@db/x)',
    );
    expect(redactText('http://host/path?next=a@b.example.com')).toBe(
      'http://host/path?next=[redacted-email]',
    );
  });

  it.each([
    ['an empty value', '{"token":"","password":"hunter2","user":"bob"}'],
    ['a JSON escape in the value', '{"token":"page\\u002f2","password":"hunter2"}'],
    ['an unclosed value', 'token: "page 2 password: hunter2'],
  ])('an allowed key (%s) never keeps a secret after it on its line', (_shape, text) => {
    const redact = createRedactor({ allow: ['token'] });
    expect(redact(text)).not.toContain('hunter2');
    expect(describeError(new Error(`refused ${text}, "apiKey":"k-123456"`), 2_000, redact)).not.toMatch(
      /hunter2|k-123456/,
    );
  });

  it.each([
    ['an empty password', '{"password":"","orderId":"42","error":"card declined"}'],
    ['an escape in the value', '{"token":"a\\u00e9b","orderId":"42","error":"card declined"}'],
    ['a Windows path', '{"password":"C:\\\\keys","orderId":"42","error":"card declined"}'],
    ['the other quote inside', '{"password":"it\'s mine","orderId":"42","error":"card declined"}'],
  ])('a quoted value that closes (%s) takes only itself, not the rest of the line', (_shape, text) => {
    const redacted = redactText(text);
    expect(redacted).toContain('"error":"card declined"');
    expect(redacted).toContain('"orderId":"42"');
    expect(redacted).not.toMatch(/u00e9|keys|mine/);
  });

  it('takes a database or broker URL password that starts with digits and holds a /, which reads like a port and a path', () => {
    for (const [text, secret] of [
      ['connect postgres://app:123/abc@db:5432/x failed', '123/abc'],
      ['postgresql://app:8/Xy+z=@db/prod', '8/Xy'],
      ['amqps://u:9/x@broker:5671', '9/x'],
      ['redis://:42/secret@h:6379', '42/secret'],
      ['mongodb+srv://u:7/7@cluster0.example.net/db', '7/7'],
    ] as const) {
      expect(redactText(text)).not.toContain(secret);
    }
    expect(redactText('connect postgres://app:123/abc@db:5432/x failed')).toBe(
      'connect postgres://[redacted]@db:5432/x failed',
    );
    // An HTTP URL with a port and an '@' in its path keeps its host and port.
    expect(redactText('GET http://host:8080/path@x failed')).toBe('GET http://host:8080/path@x failed');
  });

  it("redacts the values of a PostgreSQL key violation's detail when its columns name a sensitive key", () => {
    expect(redactText('Key (token)=(s3cret) already exists.')).toBe(
      'Key (token)=([redacted]) already exists.',
    );
    // An expression for a column (`'token'::text` reads as a key and a value to the key rule too)
    const expression = redactText("Key ((payload ->> 'token'::text))=(a (b) c) already exists.");
    expect(expression).not.toMatch(/a \(b\) c/);
    expect(expression).toMatch(/^Key \(\(payload ->> 'token'.*\[redacted\].* already exists\.$/);
    expect(redactText('Key (user_id, api_key)=(7, k-1)')).toBe('Key (user_id, api_key)=([redacted])');
    expect(createRedactor({ keys: ['pin'] })('Key (pin)=(1234) is not present in table "cards".')).toBe(
      'Key (pin)=([redacted]) is not present in table "cards".',
    );
    // Other keys' values stay: they tell which row conflicted.
    const kept = 'Key (consumer, message_id)=(orders, m-17) already exists.';
    expect(redactText(kept)).toBe(kept);
    expect(createRedactor({ allow: ['token'] })('Key (token)=(page-2) already exists.')).toBe(
      'Key (token)=(page-2) already exists.',
    );
  });

  it('redacts the row of a PostgreSQL CHECK or NOT NULL detail whole, to its closing parenthesis', () => {
    expect(redactText('Failing row contains (1, t, {"note": "n (1) x"}, null).')).toBe(
      'Failing row contains ([redacted]).',
    );
    // A value may run on across lines (multilineDetail.test.ts): a row never closed is redacted
    // to the end of the text.
    expect(redactText('Failing row contains (1, cut sh\nnext line')).toBe('Failing row contains ([redacted]');
  });

  it('redacts the extra keys an application names', () => {
    const redact = createRedactor({ keys: ['ssn', 'iban'] });
    expect(redact('ssn=123-45-6789 iban: DE89370400440532013000')).toBe('ssn=[redacted] iban: [redacted]');
  });
});
