import { isUuid } from './uuid';

describe('isUuid', () => {
  it.each([
    '0b0e2f4c-6d8a-4c1e-9f3a-2b4c6d8e0f1a',
    '0B0E2F4C-6D8A-4C1E-9F3A-2B4C6D8E0F1A',
    '00000000-0000-0000-0000-000000000000',
  ])('takes %s', (value) => {
    expect(isUuid(value)).toBe(true);
  });

  it.each([
    '',
    ' 0b0e2f4c-6d8a-4c1e-9f3a-2b4c6d8e0f1a',
    '0b0e2f4c-6d8a-4c1e-9f3a-2b4c6d8e0f1a\n',
    '{0b0e2f4c-6d8a-4c1e-9f3a-2b4c6d8e0f1a}',
    '0b0e2f4c6d8a4c1e9f3a2b4c6d8e0f1a',
    '0b0e2f4c-6d8a-4c1e-9f3a-2b4c6d8e0f1g',
    'not-a-uuid',
  ])('refuses %j', (value) => {
    expect(isUuid(value)).toBe(false);
  });

  it.each([null, undefined, 1, {}, ['0b0e2f4c-6d8a-4c1e-9f3a-2b4c6d8e0f1a']])('refuses %p', (value) => {
    expect(isUuid(value)).toBe(false);
  });
});
