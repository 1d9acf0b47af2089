/**
 * A sensitive key's value is redacted whole whatever its shape: a JSON or YAML flow array or
 * object (to its balanced closing bracket), a YAML block scalar (its indented lines), `:=`,
 * percent-encoded pairs, every cookie of a Cookie header, a quote inside an unquoted value,
 * quotes written as `\u0022`. First found by the wip/review probes (redactLeaks.test.ts there).
 */
import { createRedactor, describeError, redactText } from './redact';

const SECRET = 'hunter2secret';

describe('values of sensitive keys, whatever their shape', () => {
  it.each([
    [
      'JSON array value',
      '{"password":["hunter2secret","x"],"user":"bob"}',
      '{"password":[redacted],"user":"bob"}',
    ],
    [
      'JSON object value',
      '{"credentials":{"user":"a","pass":"hunter2secret"},"user":"bob"}',
      '{"credentials":[redacted],"user":"bob"}',
    ],
    [
      'a bracket inside a string of the value',
      'password={"a":["]"],"b":"hunter2secret"} ok',
      'password=[redacted] ok',
    ],
    [
      'escaped JSON array value',
      '{\\"password\\":[\\"a]\\",\\"hunter2secret\\"],\\"user\\":\\"bob\\"}',
      '{\\"password\\":[redacted],\\"user\\":\\"bob\\"}',
    ],
    ['a bracketed value never closed', 'password=[["hunter2secret"] next', 'password=[[redacted]'],
    ['YAML/flow array value', 'password: ["hunter2secret"] next', 'password: [redacted] next'],
    [
      'YAML literal block',
      'password: |\n  hunter2secret\n  line2\nuser: bob',
      'password: [redacted]\nuser: bob',
    ],
    [
      'YAML folded block, a blank line inside',
      'db:\n  password: >-\n    hunter2secret\n\n    more\n  user: bob\n',
      'db:\n  password: [redacted]\n  user: bob\n',
    ],
    [
      'YAML block in a list',
      '- password: |2\n    hunter2secret\n  user: bob',
      '- password: [redacted]\n  user: bob',
    ],
    [
      'a block indicator with its lines joined',
      'password: | hunter2secret rest',
      'password: [redacted] rest',
    ],
    ['colon-equals', 'password := hunter2secret ok', 'password := [redacted] ok'],
    [
      'percent-encoded key=value',
      'https://idp/login?next=%2Fcb%3Fpassword%3Dhunter2secret',
      'https://idp/login?next=%2Fcb%3Fpassword%3D[redacted]',
    ],
    ['percent-encoded twice', 'next=%253Fpassword%253Dhunter2secret', 'next=%253Fpassword%253D[redacted]'],
    ['a quote inside an unquoted value', "password=ab'hunter2secret next", 'password=[redacted] next'],
    [
      'a quote ending an unquoted value',
      '{"msg":"password=abc","user":"bob"}',
      '{"msg":"password=[redacted]","user":"bob"}',
    ],
    [
      '\\u0022-escaped quotes in JSON-in-JSON',
      '{"body":"{\\u0022password\\u0022:\\u0022hunter2secret x\\u0022,\\u0022user\\u0022:\\u0022bob\\u0022}"}',
      '{"body":"{\\u0022password\\u0022:\\u0022[redacted]\\u0022,\\u0022user\\u0022:\\u0022bob\\u0022}"}',
    ],
    ['Cookie header, every cookie', 'Cookie: theme=dark; sid=hunter2secret; x=1 ok', 'Cookie: [redacted] ok'],
    [
      'Set-Cookie header',
      'Set-Cookie: sid=hunter2secret; Path=/; HttpOnly',
      'Set-Cookie: [redacted]; HttpOnly',
    ],
    ['a pass key', 'smtp_pass=hunter2secret ok', 'smtp_pass=[redacted] ok'],
    ['an auth key', '{"auth":"app:hunter2secret"}', '{"auth":"[redacted]"}'],
    ['a signature', 'url?X-Amz-Signature=hunter2secret&x=1', 'url?X-Amz-Signature=[redacted]&x=1'],
    [
      'words that only begin like those keys',
      'authentication failed: bad, passed: 3',
      'authentication failed: bad, passed: 3',
    ],
  ])('%s', (_name, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });

  it('keeps an allowed key whose value is an array, and redacts the secrets inside it', () => {
    const redact = createRedactor({ allow: ['token'] });
    expect(redact(`token: ["page-2", {"password": "${SECRET}"}] ok`)).toBe(
      'token: ["page-2", {"password": "[redacted]"}] ok',
    );
  });

  it('describeError reads the lines as written: a YAML block scalar in a message, stored in last_error', () => {
    const stored = describeError(new Error(`invalid config:\n  password: |\n    ${SECRET}\n  user: bob\n`));
    expect(stored).toBe('Error: invalid config: password: [redacted] user: bob');
    // Its lines joined first, only the first word after `|` would be known to be the value.
    const twoLines = describeError(new Error('password: >\n  correct horse\n  battery staple\nuser: bob'));
    expect(twoLines).toBe('Error: password: [redacted] user: bob');
  });
});
